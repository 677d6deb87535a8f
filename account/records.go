package account

import (
	"context"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// The store's documents, all JSON but the secret:
//
//   - secret: the operator secret, raw bytes (when Config.Secret is nil).
//   - account/<id>: an accountRecord: the Account, its password hash and
//     its purchases, so that a purchase and its credits change together.
//   - owner/<lowercased owner>: the id of the owner's account.
//   - key/<key id>: a keyRecord: the Key and the HMAC of its secret, so
//     that Authenticate reads it and the account, and RevokeKey deletes
//     it in one write.
//   - accountkey/<account id>/<key id>: empty; lists an account's keys.
//   - session/<hex HMAC of the token>: a Session, with the store's TTL.
//   - ledger/<month>: a JSON object of counters.
//   - payment/<payment id>: the id of the account the payment credited,
//     so that one payment credits one account.
//   - loginfail/<hex HMAC of the lowercased owner>: the count of login
//     attempts since the owner's last successful login, counted before
//     their passwords are checked, with a TTL of LoginWindow; and
//     loginfail/<hex HMAC of the owner and a client>: the same, of the
//     attempts from one client.
const (
	docSecret     = "secret"
	docAccount    = "account/"
	docOwner      = "owner/"
	docKey        = "key/"
	docAccountKey = "accountkey/"
	docSession    = "session/"
	docLedger     = "ledger/"
	docLoginFail  = "loginfail/"
	docPayment    = "payment/"
)

// Domain separation of the operator secret's HMACs.
const (
	domainKey     = "inferkit account: api key\x00"
	domainSession = "inferkit account: console session\x00"
	domainLogin   = "inferkit account: login owner\x00"
	// domainLoginClient: an owner, a zero byte and a client.
	domainLoginClient = "inferkit account: login owner from client\x00"
)

// KeyPrefix begins every API key CreateKey makes.
const KeyPrefix = "sk-ik-"

// secretBytes is the length of a secret Accounts makes, and the least it
// accepts.
const secretBytes = 32

// DefaultPasswordIterations is the PBKDF2-HMAC-SHA-256 work of a password
// hash when Config.PasswordIterations is 0: OWASP's advice (2023).
const DefaultPasswordIterations = 600_000

// passwordScheme names the hash format: scheme$iterations$salt$hash.
const passwordScheme = "pbkdf2-sha256"

// accountRecord is the document of an account.
type accountRecord struct {
	Account
	// Password is the PBKDF2 hash of the owner's password; "" for none.
	Password string `json:"password,omitzero"`
	// Purchases are the account's purchases, oldest first.
	Purchases []Purchase `json:"purchases,omitzero"`
	// Holds are the prepaid reservations in flight, by holdID; Held is
	// their sum.
	Holds map[string]hold `json:"holds,omitzero"`
	// Lapsed are holds given back after ratelimit.Lease without
	// settling, by holdID, with when they were made: a late Settle
	// draws its cost then, once; each is dropped after ratelimit.Hold.
	Lapsed map[string]time.Time `json:"lapsed,omitzero"`
}

// keyRecord is the document of a key.
type keyRecord struct {
	Key
	// Hash is HMAC-SHA-256 of the key's secret under the operator secret.
	Hash []byte `json:"hash"`
}

// mac returns HMAC-SHA-256(secret, domain || msg).
func (a *Accounts) mac(domain, msg string) []byte {
	h := hmac.New(sha256.New, a.secret)
	h.Write([]byte(domain))
	h.Write([]byte(msg))
	return h.Sum(nil)
}

// keyID is the id of a key whose secret has HMAC sum.
func keyID(sum []byte) string { return "key_" + hex.EncodeToString(sum[:8]) }

// KeyDigest returns the HMAC-SHA-256 of an API key under an operator
// secret, and the key's id ("key_" and the digest's first 8 bytes in
// hex): what Accounts stores and logs of a key. It is exported for key
// stores that keep keys elsewhere (httpapi.StaticKeys), so that a key has
// one id under one secret wherever it is checked; compare digests with
// hmac.Equal.
func KeyDigest(operatorSecret []byte, key string) (digest []byte, id string) {
	h := hmac.New(sha256.New, operatorSecret)
	h.Write([]byte(domainKey))
	h.Write([]byte(key))
	digest = h.Sum(nil)
	return digest, keyID(digest)
}

// keyHint shows a key's start and end: the prefix, two characters, an
// ellipsis and the last four, at most 6 of its random characters.
func keyHint(secret string) string {
	if !strings.HasPrefix(secret, KeyPrefix) || len(secret) < len(KeyPrefix)+12 {
		// A static key of another shape: its last four characters only,
		// and only if it is long enough to keep most of it hidden.
		if len(secret) >= 16 {
			return "…" + secret[len(secret)-4:]
		}
		return "…"
	}
	rest := secret[len(KeyPrefix):]
	return KeyPrefix + rest[:2] + "…" + rest[len(rest)-4:]
}

// loadSecret returns the operator secret kept in the store, making it at
// random on first use (a store that holds no key or account besides
// DefaultAccount), with a copy in file when file is not "" (see
// Config.SecretFile).
func loadSecret(ctx context.Context, s Store, file string, log *slog.Logger) ([]byte, error) {
	var kept []byte // the file's secret
	if file != "" {
		b, err := os.ReadFile(file)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return nil, fmt.Errorf("account: Config.SecretFile: %w", err)
		default:
			if kept, err = hex.DecodeString(strings.TrimSpace(string(b))); err != nil || len(kept) < secretBytes {
				return nil, fmt.Errorf("account: Config.SecretFile %s does not hold an operator secret (%d or more bytes in hex)", file, secretBytes)
			}
		}
	}
	// Is the store empty, so that a secret may be made? Read before the
	// Update: a Bolt's fn may not read the store.
	used := false
	if _, err := s.Get(ctx, docSecret); errors.Is(err, ErrNotFound) && kept == nil {
		for _, prefix := range []string{docKey, docAccount} {
			docs, err := s.List(ctx, prefix)
			if err != nil {
				return nil, fmt.Errorf("account: the operator secret: %w", err)
			}
			used = used || slices.ContainsFunc(docs, func(d string) bool { return d != docAccount+DefaultAccount })
		}
	} else if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("account: the operator secret: %w", err)
	}
	var secret []byte
	made, restored := false, false
	err := s.Update(ctx, docSecret, 0, func(old []byte) ([]byte, error) {
		made, restored = false, false
		switch {
		case old != nil && kept != nil && !hmac.Equal(old, kept):
			return nil, fmt.Errorf("account: the store's operator secret is not the one in %s: %w", file, ErrSecretMismatch)
		case old != nil:
			secret = old
			return old, nil
		case kept != nil:
			secret, restored = kept, true
			return kept, nil
		case used:
			return nil, fmt.Errorf("%w: it holds accounts or keys, so it has lost data (a Redis restarted without persistence, FLUSHALL, eviction); "+
				"a new secret would make every stored key fail: give the secret back (Config.Secret or SecretFile; the server's -secret-file), or empty the store", ErrSecretLost)
		}
		secret, made = make([]byte, secretBytes), true
		rand.Read(secret)
		return secret, nil
	})
	if err != nil {
		return nil, fmt.Errorf("account: the operator secret: %w", err)
	}
	if len(secret) < secretBytes {
		return nil, fmt.Errorf("account: the operator secret in the store has %d bytes, fewer than %d", len(secret), secretBytes)
	}
	switch {
	case restored:
		log.Warn("account: the store had no operator secret; put back the one kept in the secret file", "file", file)
	case made:
		log.Info("account: made a new operator secret and kept it in the store", "file", file)
	}
	if file != "" && kept == nil {
		if err := writeSecretFile(file, secret); err != nil {
			return nil, err
		}
	}
	return secret, nil
}

// writeSecretFile writes secret into file, in hex, mode 0600, through a
// temporary file renamed over it, so that a crash leaves no half file.
func writeSecretFile(file string, secret []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+".*")
	if err != nil {
		return fmt.Errorf("account: Config.SecretFile: %w", err)
	}
	_, err = tmp.WriteString(hex.EncodeToString(secret) + "\n")
	if err == nil {
		err = tmp.Chmod(0o600)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), file)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("account: Config.SecretFile: %w", err)
	}
	return nil
}

// hashPassword returns the stored form of a password, hashed with iter
// iterations.
func hashPassword(password string, iter int) (string, error) {
	salt := make([]byte, 16)
	rand.Read(salt)
	sum, err := pbkdf2.Key(sha256.New, password, salt, iter, sha256.Size)
	if err != nil {
		return "", fmt.Errorf("account: hashing a password: %w", err)
	}
	b64 := base64.RawStdEncoding
	return passwordScheme + "$" + strconv.Itoa(iter) + "$" + b64.EncodeToString(salt) + "$" + b64.EncodeToString(sum), nil
}

// checkPassword reports whether password matches a stored hash, in time
// that depends only on the hash's iterations.
func checkPassword(stored, password string) bool {
	parts := strings.Split(stored, "$")
	if len(parts) != 4 || parts[0] != passwordScheme {
		return false
	}
	iter, err := strconv.Atoi(parts[1])
	if err != nil || iter < 1 {
		return false
	}
	b64 := base64.RawStdEncoding
	salt, err1 := b64.DecodeString(parts[2])
	want, err2 := b64.DecodeString(parts[3])
	if err1 != nil || err2 != nil || len(want) != sha256.Size {
		return false
	}
	got, err := pbkdf2.Key(sha256.New, password, salt, iter, sha256.Size)
	return err == nil && subtle.ConstantTimeCompare(got, want) == 1
}

// dummyPassword is the hash Login checks when it meets an unknown owner,
// so that it takes as long as a wrong password: all-zero salt and hash,
// iter iterations.
func dummyPassword(iter int) string {
	b64 := base64.RawStdEncoding
	return passwordScheme + "$" + strconv.Itoa(iter) + "$" +
		b64.EncodeToString(make([]byte, 16)) + "$" + b64.EncodeToString(make([]byte, sha256.Size))
}

// checkName validates a name of an account or key: 1 to 100 characters,
// printable, not only spaces.
func checkName(what, name string) error {
	n := utf8.RuneCountInString(name)
	switch {
	case !utf8.ValidString(name):
		return invalid("name", "%s name is not UTF-8", what)
	case strings.TrimSpace(name) == "":
		return missing("name", what+" name is empty")
	case n > 100:
		return invalid("name", "%s name has %d characters, more than 100", what, n)
	case strings.IndexFunc(name, func(r rune) bool { return !unicode.IsPrint(r) && r != ' ' }) >= 0:
		return invalid("name", "%s name has a control character", what)
	}
	return nil
}

// checkID validates an account id: 1 to 64 ASCII letters, digits, '_'
// and '-', as it names documents.
func checkID(id string) error {
	if id == "" || len(id) > 64 || strings.IndexFunc(id, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-')
	}) >= 0 {
		return invalid("id", "an account id has 1 to 64 letters, digits, '_' or '-'")
	}
	return nil
}

// checkOwner validates an owner: an e-mail address of 3 to 254 bytes
// without spaces.
func checkOwner(owner string) error {
	at := strings.LastIndexByte(owner, '@')
	if len(owner) < 3 || len(owner) > 254 || at < 1 || at == len(owner)-1 ||
		strings.IndexFunc(owner, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) }) >= 0 {
		return invalid("owner", "not an e-mail address of 254 bytes at most")
	}
	return nil
}

// ownerDoc is the document that reserves an owner.
func ownerDoc(owner string) string { return docOwner + strings.ToLower(owner) }

// newID returns prefix and 16 random lower-case letters and digits (80
// bits).
func newID(prefix string) string {
	return prefix + strings.ToLower(rand.Text()[:16])
}

// getJSON reads a document into v.
func getJSON(ctx context.Context, s Store, doc string, v any) error {
	b, err := s.Get(ctx, doc)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("account: document %q: %w", doc, err)
	}
	return nil
}

// getAccount reads an account's record; ErrNotFound names the account.
func (a *Accounts) getAccount(ctx context.Context, id string) (accountRecord, error) {
	var r accountRecord
	err := getJSON(ctx, a.store, docAccount+id, &r)
	r.rules = a.rules
	if errors.Is(err, ErrNotFound) {
		return r, fmt.Errorf("account: account %q: %w", id, ErrNotFound)
	}
	return r, err
}

// updateAccount changes an existing account's record by fn and returns
// the account after it. fn returns false to leave the record as it is.
func (a *Accounts) updateAccount(ctx context.Context, id string, fn func(r *accountRecord) (bool, error)) (Account, error) {
	if id == "" {
		return Account{}, missing("account", "account id is empty")
	}
	var out Account
	err := a.store.Update(ctx, docAccount+id, 0, func(old []byte) ([]byte, error) {
		if old == nil {
			return nil, fmt.Errorf("account: account %q: %w", id, ErrNotFound)
		}
		var r accountRecord
		if err := json.Unmarshal(old, &r); err != nil {
			return nil, fmt.Errorf("account: document %q: %w", docAccount+id, err)
		}
		r.rules = a.rules
		changed, err := fn(&r)
		if err != nil {
			return nil, err
		}
		out = r.Account
		if !changed {
			return old, nil
		}
		return json.Marshal(r)
	})
	if err != nil {
		return Account{}, err
	}
	return out, nil
}
