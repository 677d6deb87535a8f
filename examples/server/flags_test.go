package main

import (
	"errors"
	"flag"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/inferkit/inferkit/account"
	"github.com/inferkit/inferkit/catalog"
)

func TestParseFlags(t *testing.T) {
	env := map[string]string{"INFERKIT_API_KEYS": " k3 ,,k4"}
	o, err := parseFlags([]string{
		"-addr", ":9000", "-model", "core-2-5-mini=a.gguf", "-model", "mine=a.gguf",
		"-api-key", "k1", "-api-key", "k2", "-parallel", "2", "-ctx", "1024", "-threads", "1",
	}, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.addr != ":9000" || o.parallel != 2 || o.ctx != 1024 || o.threads != 1 || strings.Join(o.keys, ",") != "k1,k2,k3,k4" {
		t.Errorf("options %+v", o)
	}
	if len(o.models) != 2 || o.models[0].ID != "core-2-5-mini" || o.models[0].Path != "a.gguf" || o.models[0].Pricing.Prompt == "" ||
		o.models[1].ID != "mine" || o.models[1].Pricing.Prompt != "" {
		t.Errorf("models %+v", o.models)
	}

	o, err = parseFlags(nil, func(string) string { return "" }, io.Discard)
	if err != nil || o.addr != "127.0.0.1:8080" || len(o.models) != 0 || len(o.keys) != 0 || o.noMetrics || o.fetchImages || o.kvTokens != 8192 {
		t.Errorf("defaults %+v %v", o, err)
	}
	if o, err := parseFlags([]string{"-backend", "ollama"}, func(string) string { return "" }, io.Discard); err != nil || o.backend != "ollama" {
		t.Errorf("-backend: %+v %v", o, err)
	}
	if o, err := parseFlags([]string{"-backend", "libllama", "-libllama", "/opt/llama/libllama.so"}, func(string) string { return "" }, io.Discard); err != nil || o.backend != "libllama" || o.library != "/opt/llama/libllama.so" {
		t.Errorf("-backend libllama -libllama: %+v %v", o, err)
	}
	if o, err := parseFlags([]string{"-libllama", "/opt/llama/libllama.so", "-flash-attention"}, func(string) string { return "" }, io.Discard); err != nil || !o.flash {
		t.Errorf("-flash-attention: %+v %v", o, err)
	}
	if o, err := parseFlags([]string{"-ngram", "-draft-recurrent"}, func(string) string { return "" }, io.Discard); err != nil || !o.ngram || !o.draftRecurrent {
		t.Errorf("-ngram -draft-recurrent: %+v %v", o, err)
	}
	if o, err := parseFlags([]string{"-fetch-images"}, func(string) string { return "" }, io.Discard); err != nil || !o.fetchImages {
		t.Errorf("-fetch-images: %+v %v", o, err)
	}
	if o, err := parseFlags([]string{"-cache-type-k", "q8_0", "-cache-type-v", "q4_0", "-kv-tokens", "8192"}, func(string) string { return "" }, io.Discard); err != nil || o.keyCache != "q8_0" || o.valueCache != "q4_0" || o.kvTokens != 8192 {
		t.Errorf("-cache-type-k/-v: %+v %v", o, err)
	}
	if o, err := parseFlags([]string{"-cache-dir", "/tmp/kv", "-cache-mib", "512", "-keep-alive", "0"}, func(string) string { return "" }, io.Discard); err != nil || o.cacheDir != "/tmp/kv" || o.cacheMiB != 512 || o.keepAlive != 0 {
		t.Errorf("-cache-dir, -cache-mib, -keep-alive: %+v %v", o, err)
	}
	if o.keepAlive != 5*time.Minute || o.cacheMiB != 4096 || o.cacheDir != "" {
		t.Errorf("prompt cache and keep-alive defaults: %+v", o)
	}
	if o, err := parseFlags([]string{"-search-url", "http://127.0.0.1:8888"}, func(string) string { return "" }, io.Discard); err != nil || o.searchURL != "http://127.0.0.1:8888" {
		t.Errorf("-search-url: %+v %v", o, err)
	}
	for in, want := range map[string]string{"http://127.0.0.1:4318": "http://127.0.0.1:4318/v1/traces", "https://otel.example/": "https://otel.example/v1/traces",
		"http://c:4318/custom/traces": "http://c:4318/custom/traces"} {
		if o, err := parseFlags([]string{"-otlp", in}, func(string) string { return "" }, io.Discard); err != nil || o.otlp != want {
			t.Errorf("-otlp %s: %q %v, want %q", in, o.otlp, err, want)
		}
	}
	if o, err := parseFlags([]string{"-mcp-allow", "https://a.example/", "-mcp-allow", "http://127.0.0.1:3001/mcp"}, func(string) string { return "" }, io.Discard); err != nil || len(o.mcpAllow) != 2 {
		t.Errorf("-mcp-allow: %+v %v", o.mcpAllow, err)
	}
	if _, err := parseFlags([]string{"-forge", "https://api.github.com", "-forge-model", "core-3-flash"}, func(string) string { return "" }, io.Discard); err == nil {
		t.Error("-forge without its token, secret and key accepted")
	}
	forgeEnv := map[string]string{"INFERKIT_FORGE_TOKEN": "t", "INFERKIT_FORGE_SECRET": "s", "INFERKIT_FORGE_KEY": "k"}
	if o, err := parseFlags([]string{"-forge", "https://api.github.com", "-forge-model", "core-3-flash"}, func(k string) string { return forgeEnv[k] }, io.Discard); err != nil || o.forgeToken != "t" || o.forgeKey != "k" {
		t.Errorf("-forge: %+v %v", o, err)
	}
	if o, err := parseFlags([]string{"-review-repo", "app=/srv/git/app"}, func(string) string { return "" }, io.Discard); err != nil || o.reviewRepos["app"] != "/srv/git/app" {
		t.Errorf("-review-repo: %+v %v", o.reviewRepos, err)
	}
	if o, err := parseFlags([]string{"-mcp-serve"}, func(string) string { return "" }, io.Discard); err != nil || !o.mcpServe {
		t.Errorf("-mcp-serve: %+v %v", o, err)
	}
	if o, err := parseFlags([]string{"-metrics=false"}, func(string) string { return "" }, io.Discard); err != nil || !o.noMetrics {
		t.Errorf("-metrics=false: %+v %v", o, err)
	}
	for _, args := range [][]string{{"-model", "nopath"}, {"-model", "=x.gguf"}, {"-model", "id="}, {"extra"}, {"-ctx", "many"}, {"-cache-mib", "0"}, {"-keep-alive", "-1s"}, {"-search-url", "http://a", "-search-index", "b"}, {"-otlp", "127.0.0.1:4318"}, {"-otlp", "grpc://c:4317"}} {
		if _, err := parseFlags(args, func(string) string { return "" }, io.Discard); err == nil {
			t.Errorf("%q accepted", args)
		}
	}
	if _, err := parseFlags([]string{"-h"}, func(string) string { return "" }, io.Discard); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: %v", err)
	}
}

func TestParseKeyTiers(t *testing.T) {
	for _, tc := range []struct {
		in, key, tier string
	}{
		{"sk-a", "sk-a", ""},
		{"sk-a:tier2", "sk-a", "tier2"},
		{"sk-a:TIER3", "sk-a", "tier3"},
		{"sk-a:unlimited", "sk-a", "unlimited"},
		{"sk:a:default", "sk:a", "default"},
	} {
		k, tier, err := parseKey(tc.in)
		if err != nil || k != tc.key || tier != tc.tier {
			t.Errorf("parseKey(%q) = %q on %q, %v; want %q on %q", tc.in, k, tier, err, tc.key, tc.tier)
		}
	}
	for _, bad := range []string{"sk-a:gold", ":tier2"} {
		if _, _, err := parseKey(bad); err == nil {
			t.Errorf("parseKey(%q) accepted", bad)
		} else if strings.Contains(err.Error(), "sk-a:") {
			t.Errorf("the error repeats the key: %v", err)
		}
	}
	env := map[string]string{"INFERKIT_API_KEYS": "k1:tier2, k2"}
	o, err := parseFlags([]string{"-api-key", "k0:tier2", "-redis", "127.0.0.1:6379"}, func(k string) string { return env[k] }, io.Discard)
	if err != nil || strings.Join(o.keys, ",") != "k0:tier2,k1:tier2,k2" || o.redis != "127.0.0.1:6379" {
		t.Errorf("%+v %v", o, err)
	}
	if _, err := parseFlags([]string{"-api-key", "k:platinum"}, func(string) string { return "" }, io.Discard); err == nil {
		t.Error("an unknown tier was accepted")
	}
	env["INFERKIT_API_KEYS"] = "k:platinum"
	if _, err := parseFlags(nil, func(k string) string { return env[k] }, io.Discard); err == nil {
		t.Error("an unknown tier in INFERKIT_API_KEYS was accepted")
	}
}

// The keys of the flags are the default account's, whose one tier they,
// and -tier, pin: they must agree.
func TestStaticKeysTier(t *testing.T) {
	for _, tc := range []struct {
		values     []string
		tier       string
		keys, want string // want "!" is an error
	}{
		{nil, "", "", ""},
		{[]string{"k1", "k2"}, "", "k1,k2", ""},
		{[]string{"k1", "k2:tier2"}, "", "k1,k2", "tier2"},
		{[]string{"k1:TIER2", "k2:tier2"}, "tier2", "k1,k2", "tier2"},
		{[]string{"k1"}, "Unlimited", "k1", "unlimited"},
		{[]string{"k1:tier1"}, "default", "k1", "default"}, // tier1 is Default
		{[]string{"k1:tier2", "k2:tier3"}, "", "", "!"},
		{[]string{"k1:tier2"}, "tier3", "", "!"},
		{nil, "gold", "", "!"},
	} {
		keys, tier, err := staticKeys(tc.values, tc.tier)
		switch {
		case tc.want == "!" && err == nil:
			t.Errorf("%q -tier %q: accepted, pinned %q", tc.values, tc.tier, tier)
		case tc.want == "!":
			if strings.Contains(err.Error(), "k1") || strings.Contains(err.Error(), "k2") {
				t.Errorf("the error repeats a key: %v", err)
			}
		case err != nil || strings.Join(keys, ",") != tc.keys || tier != tc.want:
			t.Errorf("%q -tier %q: %q pinned %q, %v; want %q pinned %q", tc.values, tc.tier, keys, tier, err, tc.keys, tc.want)
		}
	}
	if _, err := parseFlags([]string{"-api-key", "k1:tier2", "-tier", "tier3"}, func(string) string { return "" }, io.Discard); err == nil {
		t.Error("parseFlags accepted keys of two tiers")
	}
	if o, err := parseFlags([]string{"-tier", "unlimited"}, func(string) string { return "" }, io.Discard); err != nil || o.tier != "unlimited" {
		t.Errorf("-tier: %+v %v", o, err)
	}
}

// -admin-key turns on the admin API and the console; it is 16
// characters at least, may come from INFERKIT_ADMIN_KEY, and needs a
// durable home for accounts. -store needs one too, for its responses'
// owners.
func TestAdminFlags(t *testing.T) {
	const admin = "sk-admin-0123456789abcdef"
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, tc := range []struct {
		name     string
		args     []string
		env      map[string]string
		adminKey string
		accounts string
		insecure bool
		billing  account.Billing
		err      string
	}{
		{name: "prepaid", args: []string{"-admin-key", admin, "-accounts", "a.db", "-billing", "prepaid"}, adminKey: admin, accounts: "a.db", billing: account.Prepaid},
		{name: "postpaid", args: []string{"-accounts", "a.db", "-billing", "postpaid"}, accounts: "a.db", billing: account.Postpaid},
		{name: "prepaid without admin", args: []string{"-accounts", "a.db", "-billing", "prepaid"}, err: "-billing prepaid needs -admin-key"},
		{name: "unknown billing", args: []string{"-billing", "credit"}, err: `want postpaid or prepaid, not "credit"`},
		{name: "bolt", args: []string{"-admin-key", admin, "-accounts", "/var/lib/inferkit/accounts.db"}, adminKey: admin, accounts: "/var/lib/inferkit/accounts.db"},
		{name: "redis", args: []string{"-admin-key", admin, "-redis", "127.0.0.1:6379", "-insecure-cookies"}, adminKey: admin, insecure: true},
		{name: "environment", args: []string{"-accounts", "a.db"}, env: map[string]string{"INFERKIT_ADMIN_KEY": " " + admin + "\n"}, adminKey: admin, accounts: "a.db"},
		{name: "flag over environment", args: []string{"-admin-key", admin, "-accounts", "a.db"}, env: map[string]string{"INFERKIT_ADMIN_KEY": "sk-admin-from-the-environment"}, adminKey: admin, accounts: "a.db"},
		{name: "accounts alone", args: []string{"-accounts", "a.db"}, accounts: "a.db"},
		{name: "store and accounts", args: []string{"-store", "r.db", "-accounts", "a.db"}, accounts: "a.db"},
		{name: "short", args: []string{"-admin-key", "sk-admin-short", "-accounts", "a.db"}, err: "16 or more"},
		{name: "nowhere to keep accounts", args: []string{"-admin-key", admin}, err: "-admin-key needs -accounts PATH"},
		{name: "two homes", args: []string{"-accounts", "a.db", "-redis", "127.0.0.1:6379"}, err: "give one"},
		{name: "store alone", args: []string{"-store", "r.db"}, err: "-store needs -accounts PATH or -redis ADDR"},
		{name: "secret file without redis", args: []string{"-accounts", "a.db", "-secret-file", "s"}, err: "-secret-file needs -redis"},
		{name: "secret file in the environment", args: []string{"-accounts", "a.db"}, env: map[string]string{"INFERKIT_SECRET_FILE": "s"}, err: "-secret-file needs -redis"},
	} {
		o, err := parseFlags(tc.args, env(tc.env), io.Discard)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.err)
			} else if strings.Contains(err.Error(), "sk-admin") {
				t.Errorf("%s: the error repeats the admin key: %v", tc.name, err)
			}
		case err != nil || o.adminKey != tc.adminKey || o.accounts != tc.accounts || o.insecureCookies != tc.insecure || o.billing != tc.billing:
			t.Errorf("%s: %+v %v", tc.name, o, err)
		}
	}
}

func TestLoadProgressLogsQuarters(t *testing.T) {
	var buf strings.Builder
	progress := loadProgress(slog.New(slog.NewTextHandler(&buf, nil)))
	for _, f := range []float64{0, 0.1, 0.2, 0.3, 0.4, 0.6, 0.8, 1} {
		progress("m.gguf", f)
	}
	var percents []string
	for line := range strings.Lines(buf.String()) {
		if !strings.Contains(line, "loading model") || !strings.Contains(line, "path=m.gguf") {
			t.Errorf("line %q", line)
		}
		_, p, _ := strings.Cut(strings.TrimSpace(line), "percent=")
		percents = append(percents, p)
	}
	if got := strings.Join(percents, ","); got != "30,60,80,100" {
		t.Errorf("percents logged: %s, want one line a quarter: 30,60,80,100", got)
	}
}

// -datacenter lists a model's countries, in upper case; a code that is
// no ISO 3166-1 alpha-2 code, or an id no model has, is an error naming
// it.
func TestDatacenterFlag(t *testing.T) {
	none := func(string) string { return "" }
	o, err := parseFlags([]string{"-model", "core-2-5-mini=a.gguf", "-model", "mine=a.gguf", "-datacenter", "mine=US, de"}, none, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if got := o.models[1].Datacenters; strings.Join(got, ",") != "US,DE" || o.models[0].Datacenters != nil {
		t.Errorf("datacenters %q and %q", o.models[0].Datacenters, got)
	}
	o, err = parseFlags([]string{"-rerank-model", "rr=r.gguf"}, none, io.Discard)
	if err != nil || len(o.models) != 1 || o.models[0].Kind != catalog.KindRerank || o.models[0].Path != "r.gguf" {
		t.Errorf("-rerank-model: %+v %v", o.models, err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-rerank-model", "rr"}, "want ID=PATH"},
		{[]string{"-model", "mine=a.gguf", "-datacenter", "mine=US,EU"}, `datacenter "EU" is not an ISO 3166-1 alpha-2`},
		{[]string{"-model", "mine=a.gguf", "-datacenter", "mine=USA"}, `datacenter "USA"`},
		{[]string{"-model", "mine=a.gguf", "-datacenter", "theirs=US"}, "-datacenter theirs: no model has that id"},
		{[]string{"-datacenter", "mine"}, "want ID=CC"},
	} {
		if _, err := parseFlags(tc.args, none, io.Discard); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.args, err, tc.want)
		}
	}
	models, err := demoModels()
	if err != nil {
		t.Skip(err)
	}
	if err := setDatacenters(models, map[string][]string{"core-2-5-mini": {"FR"}}); err != nil {
		t.Errorf("the demo models: %v", err)
	}
}

// -draft gives a model its draft model, and names an unknown id; -ngram
// turns n-gram lookup on.
func TestDraftFlags(t *testing.T) {
	none := func(string) string { return "" }
	o, err := parseFlags([]string{"-model", "mine=a.gguf", "-draft", "mine=small.gguf", "-ngram"}, none, io.Discard)
	if err != nil || len(o.models) != 1 || o.models[0].Draft != "small.gguf" || !o.ngram {
		t.Fatalf("%+v %v", o.models, err)
	}
	if _, err := parseFlags([]string{"-model", "mine=a.gguf", "-draft", "other=small.gguf"}, none, io.Discard); err == nil || !strings.Contains(err.Error(), "-draft other") {
		t.Fatalf("an unknown id: %v", err)
	}
	if _, err := parseFlags([]string{"-draft", "mine"}, none, io.Discard); err == nil {
		t.Fatal("-draft without a path: no error")
	}
}
