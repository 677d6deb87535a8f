// Command inferkit-server serves the Inference API on GGUF models run in
// process: chat completions, messages, responses and the model catalog.
//
//	inferkit-server -model core-2-5-mini=models/qwen3-0.6b.gguf -api-key sk-...
//
// Flags:
//
//	-addr host:port   listen address (default 127.0.0.1:8080)
//	-model ID=PATH    serve the GGUF file PATH as model ID; repeatable, and
//	                  several ids may share one file (it is loaded once).
//	                  A PATH of hf.co/ORG/REPO:QUANT, hf.co/ORG/REPO/FILE.gguf
//	                  (@REV for a revision) or an https URL of the same
//	                  shape is pulled from the Hugging Face hub at start,
//	                  with a progress line, checked against the hub's
//	                  SHA-256 and kept in -pull-dir, with its projector
//	                  (mmproj) if it has one; the same for the other
//	                  model flags
//	-pull-dir DIR     where pulled models are kept, shared by the processes
//	                  that pull (default inferkit/models in the user's
//	                  cache directory)
//	-default-model REF
//	                  with no -model, serve the model REF names (pulled as
//	                  above) under the spec's chat ids when the hub can be
//	                  reached, and the demo models when not (make run
//	                  sets it to a small real chat model)
//	-decision-model ID=PATH
//	                  serve the GGUF file PATH as decision model ID on
//	                  /v1/system and /v1/systemone (repeatable): a chat
//	                  model, or a BERT-family reranker. The first is also
//	                  "jev-latest", System One's SDKs' default model
//	-embedding-model ID=PATH
//	                  serve the GGUF file PATH as embedding model ID on
//	                  /v1/embeddings (repeatable): a GGUF whose pooling
//	                  type is mean, cls or last, such as a BERT or
//	                  nomic-bert embedding model or Qwen3-Embedding
//	-rerank-model ID=PATH
//	                  serve the reranker GGUF file PATH (rank pooling,
//	                  such as a BERT-family cross-encoder) as model ID
//	                  on /v1/rerank (repeatable). Chat and decision
//	                  models rank documents on /v1/rerank too
//	-min-dimensions ID=N
//	                  let embedding model ID, trained for truncation
//	                  (Matryoshka, such as Qwen3-Embedding), answer
//	                  requests for N dimensions or more (repeatable);
//	                  without it a request's dimensions must be the
//	                  model's own
//	-fetch-images     fetch the images that requests name by http or https
//	                  URL (public addresses only, 10 MiB and 10 s at most);
//	                  without it, images come as data: URLs only
//	-projector ID=PATH
//	                  let model ID read images through the projector GGUF
//	                  ("mmproj") PATH, in generation and decision
//	                  requests (repeatable). A model without one reads
//	                  text only, and its listing says so.
//	-draft ID=PATH    let model ID draft tokens with the smaller GGUF PATH
//	                  of the same vocabulary, which it verifies in one
//	                  batch (speculative decoding; repeatable). Output is
//	                  unchanged; requests go faster where drafts are right
//	-ngram            draft by n-gram lookup in each request's own prompt
//	                  and output for the models without -draft
//	-draft-recurrent  let recurrent models draft where the backend rolls
//	                  their state back (libllama's Qwen3.5); slower on
//	                  CPUs measured so far (BENCHMARKS.md)
//	-datacenter ID=CC[,CC...]
//	                  list model ID in the catalog's datacenters as
//	                  running in these countries, ISO 3166-1 alpha-2 codes
//	                  such as US,DE (repeatable; an unassigned code is an
//	                  error at start-up). A model's created is the
//	                  modification time of its GGUF file
//	-calibration ID=T
//	                  answer decision model ID at calibration temperature
//	                  T, as examples/calibrate fits it (repeatable)
//	-api-key KEY[:TIER]
//	                  accept this bearer key, a key of the default
//	                  account; TIER (default, tier2, tier3 or unlimited)
//	                  pins that account's rate-limit tier, as -tier does,
//	                  and every key that names one must name the same.
//	                  Repeatable. INFERKIT_API_KEYS adds comma-separated
//	                  keys of the same syntax. With none and no
//	                  -admin-key, a key is generated and printed once at
//	                  start-up.
//	-tier NAME        pin the default account's tier: default (20
//	                  requests, 30,000 input and 8,000 output tokens a
//	                  minute, 100 USD a month), tier2, tier3 or unlimited
//	                  (no limits, no spend cap: for local apps). Without
//	                  a pin the account's tier follows its credits, or
//	                  stays as the admin API set it
//	-admin-key KEY    turn on the admin API under /v1/admin (accounts,
//	                  keys, credits, tiers, plans, usage), which takes
//	                  "Authorization: Bearer KEY" and no API key, and the
//	                  owners' web console at /api-keys (sign-in at
//	                  /login, for accounts the admin API made with an
//	                  owner and a password). KEY is 16 characters at
//	                  least; INFERKIT_ADMIN_KEY may give it instead. It
//	                  needs -accounts or -redis, so that what it makes
//	                  lasts
//	-billing MODE     how accounts pay: postpaid (the default: spend is
//	                  counted per month under each tier's cap, to be
//	                  billed afterwards) or prepaid (each request holds
//	                  its maximum cost from its account's balance of
//	                  purchased credits before it decodes, draws its real
//	                  cost when it ends, and is refused with 429
//	                  insufficient_quota when the balance cannot pay; an
//	                  account has no tier, and is refused, until its
//	                  purchases reach 5 USD, the spec's Default). The
//	                  console and GET /v1/admin/usage show the balance.
//	                  Prepaid needs -admin-key, to sell the credits
//	-accounts PATH    keep accounts, keys, credits, plans and this month's
//	                  spend in the bbolt file PATH, so that they survive
//	                  a restart (default: in memory, unless -redis)
//	-insecure-cookies let the console's cookies travel over plain HTTP,
//	                  for a console reached by http:// on a host other
//	                  than localhost (default: secure cookies, for HTTPS)
//	-secret-file PATH with -redis, keep a copy of the operator secret (which
//	                  API keys are stored under) in the file PATH (hex,
//	                  mode 0600; INFERKIT_SECRET_FILE may give it): a
//	                  Redis that lost its data (restarted without
//	                  persistence, FLUSHALL, eviction) gets it back at
//	                  start-up, and a Redis whose secret differs from the
//	                  file's is refused. Without it, a Redis that lost the
//	                  secret but holds keys is refused at start-up (a new
//	                  secret would make every key fail), and a running
//	                  server puts its secret back when it finds it gone
//	-redis ADDR       keep accounts, rate limits, spend and (without
//	                  -store) stored responses in the Redis server at ADDR
//	                  (host:port or redis://...), shared by every replica
//	                  started with the same -redis: a key made or revoked
//	                  through one counts on all at once (default: in
//	                  memory, per process, or -accounts)
//	-parallel N       sequences each model decodes at once (default 4)
//	-ctx N            context tokens per sequence (default 4096, at most
//	                  the model's training context)
//	-threads N        CPU threads per model (default: all cores)
//	-backend NAME     run the models on llama.cpp, ollama (Ollama's Go
//	                  engine) or libllama (the library of -libllama);
//	                  default libllama when a library is given, then
//	                  llama.cpp, and the Go engine for files llama.cpp
//	                  cannot load (qwen35, gemma4, ...)
//	-libllama PATH    the llama.cpp shared library (libllama.so) of
//	                  release v0.4.0's API that -backend libllama loads
//	                  at run time (default $INFERKIT_LIBLLAMA)
//	-flash-attention  run the library's attention through flash attention
//	                  on f16 KV caches too: faster prefill, but
//	                  log-probabilities that vary slightly with what
//	                  shares a request's batch
//	-kv-tokens N      KV cells each model's sequences share (default
//	                  twice -ctx: two requests of a whole context at once,
//	                  or many short ones); a request waits while those at
//	                  work hold too many
//	-cache-type-k TYPE, -cache-type-v TYPE
//	                  element type of the KV cache's keys and values: f16
//	                  (default), q8_0 (half the memory) or q4_0 (a
//	                  quarter); quantized values use flash attention, and
//	                  need heads a multiple of 32 wide
//	-cache-dir DIR    keep the KV states of prompt prefixes in DIR, so that
//	                  a long system prompt is restored, not decoded again,
//	                  after a restart (default: in memory only)
//	-cache-mib N      bound the files of -cache-dir at N MiB, least
//	                  recently used first out (default 4096)
//	-keep-alive D     free a model's memory after D without a request,
//	                  and load it again on the next (default 5m; 0 keeps
//	                  models loaded)
//	-search-url URL   let chat models search the web through the SearXNG
//	                  instance at URL (its JSON API): chat's
//	                  web_search_options, the responses and messages
//	                  web_search tools
//	-search-index DIR let them search the local index in DIR instead,
//	                  which go run ./examples/searchindex builds from
//	                  folders of text, Markdown and HTML (offline search)
//	-store PATH       keep stored responses (previous_response_id, GET
//	                  /v1/responses/{id}) in the file PATH, so that they
//	                  survive a restart (default: in memory). They belong
//	                  to their key's id, which lasts across restarts only
//	                  with -accounts or -redis, where the secret it
//	                  derives from is kept: -store needs one of them
//	-metrics          serve Prometheus metrics on GET /metrics (default
//	                  true; -metrics=false turns them off)
//
// Besides the API, it answers operators without an API key: GET /healthz
// (200 while it runs), GET /readyz (200 once the models are loaded,
// which they are before it listens) and GET /metrics, in the Prometheus
// text format: requests by route, status and tier; prompt, cached and
// generated tokens, the prefix-cache hit ratio, time to first token and
// time per output token, queue depth, active sequences and load time per
// model (see package httpapi); and the Go runtime's and the process's
// metrics. These routes are on the API's listener: where -addr is
// public, keep them from the outside at the proxy.
//
// With no -model (and no -default-model it can pull) it serves demo
// models under every model id of the spec, so that the API can be tried
// at once: inferkit's tiny trained chat model (tinychat.Model,
// with a vision projector of random weights, so that it takes images)
// under the chat ids and the multimodal decision ids, its tiny trained
// embedding model (tinyembed.Model) under core-embed, and a BERT
// reranker with random weights under system-one-340m. The trained chat
// model answers right in the phrasing it was trained on (it remembers a
// name, a place or a number it was told, calls a weather tool, writes a
// person as JSON, answers simple decisions), and nonsense to anything
// else; the embedding model embeds two phrasings of the facts it was
// trained on close together. SIGINT or SIGTERM shuts it down gracefully.
package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/inferkit/inferkit/account"
	"github.com/inferkit/inferkit/cache"
	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/codereview"
	"github.com/inferkit/inferkit/console"
	"github.com/inferkit/inferkit/httpapi"
	"github.com/inferkit/inferkit/httpapi/admin"
	"github.com/inferkit/inferkit/httpapi/mcpserve"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/inference/inferencetest"
	"github.com/inferkit/inferkit/inference/inferencetest/tinychat"
	"github.com/inferkit/inferkit/inference/inferencetest/tinyembed"
	"github.com/inferkit/inferkit/policy"
	"github.com/inferkit/inferkit/ratelimit"
	"github.com/inferkit/inferkit/search"
	"github.com/inferkit/inferkit/search/localindex"
)

// options are the command line's settings.
type options struct {
	addr     string
	otlp     string // -otlp: the OTLP/HTTP collector's URL
	mcpAllow []string
	mcpServe bool // -mcp-serve: the API as an MCP server on /mcp
	models   []catalog.Model
	keys     []string
	parallel int
	ctx      int
	threads  int
	backend  string
	library  string
	flash    bool
	store    string
	redis    string
	// tier pins the default account's tier (-tier); "" leaves it.
	tier string
	// adminKey turns the admin API and the console on (-admin-key,
	// INFERKIT_ADMIN_KEY).
	adminKey string
	// accounts is the accounts' bbolt file (-accounts).
	accounts string
	// datacenters are the country codes of -datacenter, by model id.
	datacenters map[string][]string
	// billing is how accounts pay (-billing): account.Postpaid or
	// account.Prepaid.
	billing account.Billing
	// secretFile keeps a copy of the operator secret of -redis on local
	// disk (-secret-file, INFERKIT_SECRET_FILE).
	secretFile string
	// insecureCookies lets the console's cookies travel over plain HTTP
	// (-insecure-cookies).
	insecureCookies bool
	// noMetrics turns GET /metrics off (-metrics=false): the zero value
	// serves them, as the flag's default does.
	noMetrics bool
	// fetchImages lets requests name images by http(s) URL
	// (-fetch-images).
	fetchImages bool
	// keyCache and valueCache are the KV cache's element types
	// (-cache-type-k, -cache-type-v).
	keyCache, valueCache string
	// kvTokens is the KV cells each model's sequences share (-kv-tokens).
	kvTokens int
	// cacheDir and cacheMiB are the prompt cache's directory and bound
	// (-cache-dir, -cache-mib).
	cacheDir string
	cacheMiB int64
	// keepAlive is how long an idle model stays loaded (-keep-alive); 0
	// is for ever.
	keepAlive time.Duration
	// ngram drafts by n-gram lookup (-ngram, inference.DraftNgram).
	ngram bool
	// draftRecurrent is inference.Config.DraftRecurrent.
	draftRecurrent bool
	// searchURL and searchIndex name the search backend (-search-url,
	// -search-index); at most one.
	searchURL, searchIndex string
	// pullDir is where pulled models are kept (-pull-dir); "" is the
	// user's cache directory's.
	pullDir string
	// defaultModel is the hub reference served with no -model
	// (-default-model); "" serves the demo models.
	defaultModel string

	// forge and forgeModel are -forge and -forge-model; forgeToken,
	// forgeSecret and forgeKey come from the environment.
	forge, forgeModel                 string
	forgeToken, forgeSecret, forgeKey string
	// reviewRepos are -review-repo's repositories, by name.
	reviewRepos map[string]string
	// sso are the console's single sign-on providers (-sso).
	sso []console.SSOProvider
}

// writeTrained writes a trained model to path with write, through a
// temporary file, so that a server starting beside this one reads a
// whole file.
func writeTrained(path string, write func(string) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".demo-trained-*")
	if err != nil {
		return err
	}
	tmp.Close()
	if err := write(tmp.Name()); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// specIDs are the chat model ids of the spec, which the demo model serves.
var specIDs = []string{policy.Core25Pro, policy.Core25Mini, policy.Core3Flash, policy.CoreCode, policy.Core, policy.CoreMini}

// demoDecisionIDs are the decision model ids of the spec, which the demo
// models serve too: the multimodal ones on the trained chat model with a
// projector, the encoder on a random reranker.
var demoDecisionIDs = []string{policy.SystemOne27B, policy.SystemOne9B, policy.SystemOne340M}

// demoEmbeddingID is the id of the demo's embedding model.
const demoEmbeddingID = "core-embed"

func main() {
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	o, err := parseFlags(os.Args[1:], os.Getenv, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		logger.Error("inferkit-server: listen", "err", err)
		os.Exit(1)
	}
	if err := serve(ctx, o, ln, os.Stderr, logger); err != nil {
		logger.Error("inferkit-server", "err", err)
		os.Exit(1)
	}
}

// parseFlags reads the command line and the INFERKIT_API_KEYS variable.
func parseFlags(args []string, getenv func(string) string, stderr io.Writer) (options, error) {
	o := options{datacenters: map[string][]string{}}
	fs := flag.NewFlagSet("inferkit-server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.addr, "addr", "127.0.0.1:8080", "listen address, host:port")
	fs.Func("model", "serve the GGUF file PATH as model `ID=PATH` (repeatable)", func(s string) error {
		id, path, ok := strings.Cut(s, "=")
		if !ok || id == "" || path == "" {
			return fmt.Errorf("want ID=PATH, got %q", s)
		}
		m, ok := policy.Model(id) // the spec's limits and prices for its ids
		if !ok {
			m = catalog.Model{ID: id}
		}
		m.Path = path
		o.models = append(o.models, m)
		return nil
	})
	fs.Func("decision-model", "serve the GGUF file PATH as decision model `ID=PATH` on /v1/system (repeatable)", func(s string) error {
		id, path, ok := strings.Cut(s, "=")
		if !ok || id == "" || path == "" {
			return fmt.Errorf("want ID=PATH, got %q", s)
		}
		m, ok := policy.Model(id) // the spec's prices for its decision ids
		if !ok || m.Kind != catalog.KindDecision {
			m = catalog.Model{ID: id, Kind: catalog.KindDecision}
		}
		m.Path = path
		o.models = append(o.models, m)
		return nil
	})
	// kindModel reads an ID=PATH flag of a model of kind.
	kindModel := func(kind catalog.Kind) func(string) error {
		return func(s string) error {
			id, path, ok := strings.Cut(s, "=")
			if !ok || id == "" || path == "" {
				return fmt.Errorf("want ID=PATH, got %q", s)
			}
			o.models = append(o.models, catalog.Model{ID: id, Path: path, Kind: kind})
			return nil
		}
	}
	fs.Func("embedding-model", "serve the GGUF file PATH as embedding model `ID=PATH` on /v1/embeddings (repeatable)", kindModel(catalog.KindEmbedding))
	fs.Func("rerank-model", "serve the reranker GGUF file PATH (rank pooling, such as a BERT-family cross-encoder) as model `ID=PATH` on /v1/rerank (repeatable)", kindModel(catalog.KindRerank))
	minDims := map[string]int{}
	fs.Func("min-dimensions", "let embedding model ID, trained for truncation, answer from N dimensions up (`ID=N`; repeatable)", func(s string) error {
		id, v, ok := strings.Cut(s, "=")
		n, err := strconv.Atoi(v)
		if !ok || id == "" || err != nil || n < 1 {
			return fmt.Errorf("want ID=N with a positive N, got %q", s)
		}
		minDims[id] = n
		return nil
	})
	projectors, drafts := map[string]string{}, map[string]string{}
	fs.Func("projector", "read images with the projector GGUF (mmproj) at PATH for the model `ID=PATH` (repeatable)", idPaths(projectors))
	fs.Func("draft", "draft tokens for the model `ID=PATH` with the smaller GGUF of the same vocabulary at PATH (repeatable)", idPaths(drafts))
	fs.BoolVar(&o.ngram, "ngram", false, "draft by n-gram lookup in each request's prompt and output for the models without -draft")
	fs.BoolVar(&o.draftRecurrent, "draft-recurrent", false, "let recurrent models draft where the backend rolls their state back (libllama's Qwen3.5); slower on the CPUs measured so far")
	fs.Func("datacenter", "list the model `ID=CC[,CC...]` as running in these countries (ISO 3166-1 alpha-2 codes, such as US,DE) in the catalog's datacenters (repeatable)", func(s string) error {
		id, list, ok := strings.Cut(s, "=")
		if !ok || id == "" || list == "" {
			return fmt.Errorf("want ID=CC[,CC...], got %q", s)
		}
		for c := range strings.SplitSeq(list, ",") {
			o.datacenters[id] = append(o.datacenters[id], strings.ToUpper(strings.TrimSpace(c)))
		}
		return nil
	})
	calibrations := map[string]float64{}
	fs.Func("calibration", "answer decision model ID at temperature T (`ID=T`, as examples/calibrate fits it; repeatable)", func(s string) error {
		id, v, ok := strings.Cut(s, "=")
		t, err := strconv.ParseFloat(v, 64)
		if !ok || id == "" || err != nil || !(t > 0) || math.IsInf(t, 0) {
			return fmt.Errorf("want ID=T with a positive temperature T, got %q", s)
		}
		calibrations[id] = t
		return nil
	})
	fs.Func("api-key", "accept this bearer `KEY[:TIER]` of the default account; TIER (default, tier2, tier3 or unlimited) pins its tier (repeatable; INFERKIT_API_KEYS adds comma-separated keys)", func(s string) error {
		if _, _, err := parseKey(s); err != nil {
			return err
		}
		o.keys = append(o.keys, s)
		return nil
	})
	fs.StringVar(&o.tier, "tier", "", "pin the default account's tier to `NAME`: default, tier2, tier3 or unlimited (default: the tier its credits unlock)")
	fs.StringVar(&o.adminKey, "admin-key", "", "turn on the admin API (/v1/admin, \"Authorization: Bearer KEY\") and the console (/api-keys) with this `KEY` of 16 characters or more (or INFERKIT_ADMIN_KEY); needs -accounts or -redis")
	fs.Func("billing", "how accounts pay: `MODE` postpaid (spend counted under each tier's monthly cap; the default) or prepaid (each request draws its cost from the account's purchased credits, and is refused at zero); prepaid needs -admin-key, whose purchases top balances up", func(s string) error {
		switch b := account.Billing(s); b {
		case account.Postpaid, account.Prepaid:
			o.billing = b
			return nil
		}
		return fmt.Errorf("want postpaid or prepaid, not %q", s)
	})
	fs.StringVar(&o.accounts, "accounts", "", "keep accounts, keys, credits, plans and spend in the bbolt file `PATH` (default in memory, unless -redis)")
	fs.BoolVar(&o.insecureCookies, "insecure-cookies", false, "let the console's cookies travel over plain HTTP (for http:// on a host other than localhost)")
	fs.StringVar(&o.secretFile, "secret-file", "", "with -redis, keep a copy of the operator secret (which API keys are stored under) in the file `PATH`, so that a Redis that lost its data gets it back (or INFERKIT_SECRET_FILE)")
	fs.StringVar(&o.redis, "redis", "", "keep accounts, rate limits, spend and stored responses in the Redis server at `ADDR`, shared by replicas (default in memory)")
	fs.IntVar(&o.parallel, "parallel", 0, "sequences each model decodes at once (default 4)")
	fs.IntVar(&o.ctx, "ctx", 0, "context tokens per sequence (default 4096)")
	fs.IntVar(&o.threads, "threads", 0, "CPU threads per model (default all cores)")
	fs.StringVar(&o.backend, "backend", "", "run the models on `NAME`: llama.cpp, ollama (Ollama's Go engine) or libllama (the library of -libllama) (default libllama when a library is given, then llama.cpp, and the Go engine for files llama.cpp cannot load)")
	fs.StringVar(&o.library, "libllama", "", "the llama.cpp shared library (libllama.so) at `PATH`, of release v0.4.0's API, that -backend libllama loads (default $INFERKIT_LIBLLAMA)")
	fs.BoolVar(&o.flash, "flash-attention", false, "run the library's attention (-libllama) through flash attention on f16 KV caches too: faster prefill, log-probabilities that vary slightly with the batch")
	fs.IntVar(&o.kvTokens, "kv-tokens", 0, "KV cells each model's sequences share (default twice -ctx)")
	fs.StringVar(&o.keyCache, "cache-type-k", "f16", "element `TYPE` of the KV cache's keys: f16, q8_0 or q4_0")
	fs.StringVar(&o.valueCache, "cache-type-v", "f16", "element `TYPE` of the KV cache's values: f16, q8_0 or q4_0 (quantized values use flash attention)")
	fs.StringVar(&o.pullDir, "pull-dir", "", "keep the models pulled from the hub in `DIR` (default inferkit/models in the user cache directory)")
	fs.StringVar(&o.defaultModel, "default-model", "", "with no -model, serve the model `REF` (hf.co/ORG/REPO:QUANT) names under the chat ids when the hub can be reached, the demo models when not")
	fs.StringVar(&o.cacheDir, "cache-dir", "", "keep the KV states of prompt prefixes in `DIR` across restarts (default in memory only)")
	fs.Int64Var(&o.cacheMiB, "cache-mib", 4096, "bound the files of -cache-dir at `N` MiB")
	fs.DurationVar(&o.keepAlive, "keep-alive", 5*time.Minute, "free an idle model's memory after this long, and load it again on the next request (0: never)")
	fs.StringVar(&o.searchURL, "search-url", "", "search the web through the SearXNG instance at `URL`")
	fs.StringVar(&o.searchIndex, "search-index", "", "search the local index in `DIR` (built by examples/searchindex)")
	fs.StringVar(&o.store, "store", "", "keep stored responses in the file `PATH` (default in memory)")
	metrics := fs.Bool("metrics", true, "serve Prometheus metrics on GET /metrics")
	fs.BoolVar(&o.mcpServe, "mcp-serve", false, "serve the API as an MCP server on /mcp (streamable HTTP): tools chat, decide and list_models, each a request to the API under the caller's key")
	fs.StringVar(&o.forge, "forge", "", "review pull requests of the forge whose REST API is at `URL` (https://api.github.com, or a Gitea or Forgejo server's /api/v1): its pull_request webhooks go to POST /v1/code-review/webhook; needs -forge-model and INFERKIT_FORGE_TOKEN, INFERKIT_FORGE_SECRET and INFERKIT_FORGE_KEY (the bot's forge token, the webhook's secret, the API key the reviews run under)")
	o.reviewRepos = map[string]string{}
	fs.Func("review-repo", "let code reviews read ranges of the git repository at PATH, named `NAME=PATH` in requests ({repository, base, head}; repeatable)", idPaths(o.reviewRepos))
	ssoFile := fs.String("sso", "", "offer single sign-on to the console (Enterprise accounts) through the OpenID Connect providers of the JSON `FILE`: [{name, issuer, client_id, client_secret_env (the variable that holds the client's secret), redirect_url (https://HOST/login/sso/NAME/callback), account, domains}]; needs -admin-key")
	fs.StringVar(&o.forgeModel, "forge-model", "", "the model `ID` that reviews the forge's pull requests")
	fs.Func("mcp-allow", "let requests name the MCP servers whose URLs start with `PREFIX` (such as https://mcp.example.com/; repeatable): the server connects to them for the requests", func(s string) error {
		o.mcpAllow = append(o.mcpAllow, s)
		return nil
	})
	fs.Func("otlp", "export a trace of every request (OpenTelemetry: the HTTP span, admission, and the engine's spans down to prefill and decode) over OTLP/HTTP to the collector at `URL` (such as http://127.0.0.1:4318; /v1/traces is added to a URL without a path)", func(s string) (err error) {
		o.otlp, err = otlpURL(s)
		return err
	})
	fs.BoolVar(&o.fetchImages, "fetch-images", false, "fetch the images requests name by http or https URL (public addresses only, 10 MiB and 10 s at most)")
	applyRemote := remoteFlags(fs, &o.models, getenv)
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if err := applyRemote(); err != nil {
		return o, fmt.Errorf("inferkit-server: %w", err)
	}
	o.noMetrics = !*metrics
	if fs.NArg() > 0 {
		return o, fmt.Errorf("inferkit-server: unexpected arguments %q", fs.Args())
	}
	if o.searchURL != "" && o.searchIndex != "" {
		return o, errors.New("inferkit-server: -search-url and -search-index: give one search backend")
	}
	if *ssoFile != "" {
		var err error
		if o.sso, err = readSSO(*ssoFile, getenv); err != nil {
			return o, err
		}
	}
	if o.forge != "" {
		o.forgeToken, o.forgeSecret, o.forgeKey = getenv("INFERKIT_FORGE_TOKEN"), getenv("INFERKIT_FORGE_SECRET"), getenv("INFERKIT_FORGE_KEY")
		if o.forgeModel == "" || o.forgeToken == "" || o.forgeSecret == "" || o.forgeKey == "" {
			return o, errors.New("inferkit-server: -forge needs -forge-model and INFERKIT_FORGE_TOKEN, INFERKIT_FORGE_SECRET and INFERKIT_FORGE_KEY")
		}
	}
	if o.cacheMiB <= 0 || o.keepAlive < 0 {
		return o, fmt.Errorf("inferkit-server: -cache-mib %d and -keep-alive %v: want a positive size and a duration of 0 or more", o.cacheMiB, o.keepAlive)
	}
	if o.kvTokens == 0 {
		// Every sequence's whole context is the worst case, and mostly
		// empty: the sequences share twice one context instead.
		o.kvTokens = 2 * cmp.Or(o.ctx, 4096)
	}
	if err := attachProjectors(o.models, projectors); err != nil {
		return o, err
	}
	for id, path := range drafts {
		i := slices.IndexFunc(o.models, func(m catalog.Model) bool { return m.ID == id && (m.Kind == "" || m.Kind == catalog.KindChat) })
		if i < 0 {
			return o, fmt.Errorf("inferkit-server: -draft %s: no -model has that id", id)
		}
		o.models[i].Draft = path
	}
	for id, t := range calibrations {
		i := slices.IndexFunc(o.models, func(m catalog.Model) bool { return m.ID == id && m.Kind == catalog.KindDecision })
		if i < 0 {
			return o, fmt.Errorf("inferkit-server: -calibration %s: no -decision-model has that id", id)
		}
		o.models[i].Calibration = t
	}
	if len(o.models) > 0 {
		if err := setDatacenters(o.models, o.datacenters); err != nil {
			return o, err
		}
	}
	for id, n := range minDims {
		i := slices.IndexFunc(o.models, func(m catalog.Model) bool { return m.ID == id && m.Kind == catalog.KindEmbedding })
		if i < 0 {
			return o, fmt.Errorf("inferkit-server: -min-dimensions %s: no -embedding-model has that id", id)
		}
		o.models[i].MinDimensions = n
	}
	for k := range strings.SplitSeq(getenv("INFERKIT_API_KEYS"), ",") {
		if k = strings.TrimSpace(k); k != "" {
			if _, _, err := parseKey(k); err != nil {
				return o, fmt.Errorf("INFERKIT_API_KEYS: %w", err)
			}
			o.keys = append(o.keys, k)
		}
	}
	if _, _, err := staticKeys(o.keys, o.tier); err != nil {
		return o, fmt.Errorf("inferkit-server: %w", err)
	}
	if o.adminKey == "" {
		o.adminKey = strings.TrimSpace(getenv("INFERKIT_ADMIN_KEY"))
	}
	if o.secretFile == "" {
		o.secretFile = strings.TrimSpace(getenv("INFERKIT_SECRET_FILE"))
	}
	switch {
	case o.adminKey != "" && len(o.adminKey) < 16:
		// Its length only: the key itself is never repeated.
		return o, fmt.Errorf("inferkit-server: -admin-key has %d characters, want 16 or more (a random key of 128 bits or more)", len(o.adminKey))
	case o.accounts != "" && o.redis != "":
		return o, errors.New("inferkit-server: -accounts and -redis: accounts live in one place, the bbolt file or Redis; give one")
	case o.adminKey != "" && o.accounts == "" && o.redis == "":
		return o, errors.New("inferkit-server: -admin-key needs -accounts PATH (a bbolt file) or -redis ADDR: the accounts, keys and credits it makes would be lost at exit")
	case o.billing == account.Prepaid && o.adminKey == "":
		return o, errors.New("inferkit-server: -billing prepaid needs -admin-key: credits are bought through the admin API (POST /v1/admin/accounts/{id}/credits), and without any every request is refused")
	case o.secretFile != "" && o.redis == "":
		return o, errors.New("inferkit-server: -secret-file needs -redis ADDR: it keeps a copy of the operator secret that Redis keeps (a bbolt file of -accounts keeps its own)")
	case o.store != "" && o.accounts == "" && o.redis == "":
		return o, errors.New("inferkit-server: -store needs -accounts PATH or -redis ADDR: stored responses belong to their key's id, which lasts across restarts only where the accounts keep the secret it derives from")
	}
	return o, nil
}

// searchBackend opens the search backend that -search-url or
// -search-index names (nil, and a no-op close, for none).
func searchBackend(o options) (search.Searcher, func(), error) {
	switch {
	case o.searchURL != "":
		s, err := search.NewSearXNG(search.SearXNGConfig{URL: o.searchURL})
		if err != nil {
			return nil, nil, fmt.Errorf("inferkit-server: -search-url: %w", err)
		}
		return s, func() {}, nil
	case o.searchIndex != "":
		if _, err := os.Stat(o.searchIndex); err != nil {
			return nil, nil, fmt.Errorf("inferkit-server: -search-index: %w (build it with go run ./examples/searchindex -index %s FOLDER)", err, o.searchIndex)
		}
		ix, err := localindex.Open(o.searchIndex)
		if err != nil {
			return nil, nil, fmt.Errorf("inferkit-server: -search-index: %w", err)
		}
		return ix, func() { ix.Close() }, nil
	}
	return nil, func() {}, nil
}

// loadProgress logs a line each time a model's load passes another
// quarter: at start-up, and when a request loads a model that -keep-alive
// unloaded.
func loadProgress(logger *slog.Logger) func(path string, fraction float64) {
	var mu sync.Mutex
	last := map[string]int{}
	return func(path string, fraction float64) {
		q := int(fraction * 4)
		mu.Lock()
		defer mu.Unlock()
		if q == last[path] && fraction < 1 {
			return
		}
		if fraction >= 1 {
			delete(last, path)
		} else {
			last[path] = q
		}
		logger.Info("inferkit-server: loading model", "path", path, "percent", int(fraction*100))
	}
}

// idPaths parses a repeatable ID=PATH flag into paths by id.
func idPaths(paths map[string]string) func(string) error {
	return func(s string) error {
		id, path, ok := strings.Cut(s, "=")
		if !ok || id == "" || path == "" {
			return fmt.Errorf("want ID=PATH, got %q", s)
		}
		paths[id] = path
		return nil
	}
}

// attachProjectors gives each model its projector, and says a decision
// model without one reads text only, whatever the spec's defaults say.
func attachProjectors(models []catalog.Model, projectors map[string]string) error {
	for id, path := range projectors {
		i := slices.IndexFunc(models, func(m catalog.Model) bool { return m.ID == id })
		if i < 0 {
			return fmt.Errorf("inferkit-server: -projector %s: no -model or -decision-model has that id", id)
		}
		models[i].Projector = path
	}
	for i, m := range models {
		if m.Kind == catalog.KindDecision && m.Projector == "" {
			models[i].InputModalities = slices.DeleteFunc(slices.Clone(m.InputModalities), func(s string) bool { return s == "image" })
		}
	}
	return nil
}

// setDatacenters gives the models the countries of -datacenter, and
// checks them (catalog.Validate): an id no model has, or a code that is
// no ISO 3166-1 alpha-2 code, is an error that names it.
func setDatacenters(models []catalog.Model, dcs map[string][]string) error {
	for id, codes := range dcs {
		i := slices.IndexFunc(models, func(m catalog.Model) bool { return m.ID == id })
		if i < 0 {
			return fmt.Errorf("inferkit-server: -datacenter %s: no model has that id", id)
		}
		models[i].Datacenters = codes
		if err := catalog.Validate(models[i : i+1]); err != nil {
			return fmt.Errorf("inferkit-server: -datacenter: %w", err)
		}
	}
	return nil
}

// serve runs the server on ln until ctx ends, then shuts it down: the
// HTTP server first, so that requests finish, then the engine.
func serve(ctx context.Context, o options, ln net.Listener, stderr io.Writer, logger *slog.Logger) error {
	defer ln.Close()
	if len(o.models) == 0 {
		models, err := defaultModels(ctx, o, logger)
		if err != nil {
			return err
		}
		if err := setDatacenters(models, o.datacenters); err != nil {
			return err
		}
		o.models = models
	} else if err := pullModels(ctx, o, logger); err != nil {
		return err
	}
	if len(o.keys) == 0 && o.adminKey == "" {
		key := "sk-inferkit-" + rand.Text()
		// Printed once, here, and never logged.
		fmt.Fprintf(stderr, "No -api-key, INFERKIT_API_KEYS or -admin-key given. The API key of this run is:\n\n    %s\n\n", key)
		o.keys = []string{key}
	}
	// Closed after the HTTP server's shutdown, which the deferred calls
	// below follow.
	back, err := openBackends(ctx, o, logger)
	if err != nil {
		return err
	}
	defer func() {
		if err := back.close(); err != nil {
			logger.Warn("inferkit-server: closing the accounts' store", "err", err)
		}
	}()

	searcher, closeSearch, err := searchBackend(o)
	if err != nil {
		return err
	}
	defer closeSearch()

	tp, err := tracerProvider(ctx, o.otlp)
	if err != nil {
		return err
	}
	if tp != nil {
		// Shut down last: after the engine, so that it exports every
		// span the requests ended.
		defer func() {
			flush, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := tp.Shutdown(flush); err != nil {
				logger.Warn("inferkit-server: exporting the last spans", "err", err)
			}
		}()
		logger.Info("inferkit-server: exporting traces over OTLP", "url", o.otlp)
	}

	start := time.Now()
	cfg := inference.Config{
		Models: o.models, Parallel: o.parallel, ContextTokens: o.ctx, Threads: o.threads, Backend: o.backend, Library: o.library, FlashAttention: o.flash, Logger: logger,
		KeyCache: o.keyCache, ValueCache: o.valueCache, KVTokens: o.kvTokens,
		CacheDir: o.cacheDir, CacheBytes: o.cacheMiB << 20, KeepAlive: o.keepAlive, Progress: loadProgress(logger),
		Search: searcher, DraftRecurrent: o.draftRecurrent,
	}
	if tp != nil {
		cfg.TracerProvider = tp
	}
	if o.ngram {
		cfg.Draft = inference.DraftNgram
	}
	if o.keepAlive == 0 {
		cfg.KeepAlive = -1 // for ever
	}
	// What loading will take, before it does: New refuses more than the
	// machine has available.
	if plan, err := inference.Plan(cfg); err == nil {
		for _, m := range plan.Models {
			logger.Info("inferkit-server: memory plan", "path", m.Path, "ids", strings.Join(m.IDs, ","),
				"weights_mib", m.Weights>>20, "projector_mib", m.Projector>>20, "kv_mib", m.KV>>20, "compute_mib", m.Compute>>20, "total_mib", m.Total()>>20)
		}
	}
	eng, err := inference.New(cfg)
	if err != nil {
		return err
	}
	defer eng.Close()
	logger.Info("inferkit-server: models loaded", "models", len(o.models), "took", time.Since(start).Round(time.Millisecond))

	// Stored responses: in memory (nil), or in the file of -store. Its
	// deferred Close runs after the HTTP server's shutdown and before the
	// engine's.
	var store cache.Store
	if o.store != "" {
		bs, err := cache.OpenBolt(o.store, cache.BoltConfig{})
		if err != nil {
			return err
		}
		defer func() {
			if err := bs.Close(); err != nil {
				logger.Warn("inferkit-server: closing the response store", "err", err)
			}
		}()
		store = bs
		logger.Info("inferkit-server: keeping stored responses in a file", "path", o.store)
	}

	var metrics *prometheus.Registry
	if !o.noMetrics {
		// A registry of this server's own, never the package's default:
		// the API's metrics and the runtime's.
		metrics = prometheus.NewRegistry()
		metrics.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	var remote *httpapi.RemoteImages
	if o.fetchImages {
		remote = &httpapi.RemoteImages{}
	}
	apiCfg := httpapi.Config{Engine: eng, Models: o.models, Accounts: back.accounts, Logger: logger,
		Store: either(store, back.responses), Limiter: back.limiter, Metrics: metrics, RemoteImages: remote, MCPAllow: o.mcpAllow}
	if tp != nil {
		apiCfg.TracerProvider = tp
	}
	var api *httpapi.Handler
	var adm *admin.API
	if o.adminKey != "" {
		// The admin API counts its requests in the API's metrics, and
		// its key is no API key.
		adm, err = admin.New(admin.Config{Key: o.adminKey, Accounts: back.accounts, Usage: back.limiter, Logger: logger,
			Observe: func(route string, status int, id httpapi.Identity) { api.CountRequest(route, status, id) }})
		if err != nil {
			return err
		}
		apiCfg.RefuseKey = adm.IsKey
	}
	api, err = httpapi.New(apiCfg)
	if err != nil {
		return err
	}
	// The code-review product, whose generations are the API's chat
	// completions under each caller's key.
	rc := codereview.HandlerConfig{API: api, Accounts: back.accounts, Repositories: o.reviewRepos, Store: back.store, Logger: logger}
	if metrics != nil {
		rc.Metrics = metrics // the reviews' LLM observability
	}
	// The first chat model reviews, unless a plan with
	// bring-your-own-model names another.
	if i := slices.IndexFunc(o.models, func(m catalog.Model) bool { return m.Kind == "" || m.Kind == catalog.KindChat }); i >= 0 {
		rc.Model = o.models[i].ID
	}
	quotas, _ := back.limiter.(ratelimit.Quotas)
	if quotas != nil && back.accounts != nil {
		rc.Quotas = quotas // the plans' monthly reviews, summaries and seats
		go chargePlans(ctx, back.accounts, quotas, logger)
	} else {
		quotas = nil
	}
	review, err := codereview.NewHandler(rc)
	if err != nil {
		return err
	}
	if len(o.sso) > 0 && adm == nil {
		return errors.New("inferkit-server: -sso offers sign-in to the console, which needs -admin-key")
	}
	var root http.Handler = api
	if adm != nil {
		con, err := console.New(console.Config{Accounts: back.accounts, Usage: back.limiter, Logger: logger, InsecureCookies: o.insecureCookies,
			SSO: o.sso, Quotas: quotas, CodeReview: review})
		if err != nil {
			return err
		}
		root = withConsole(adm.Mount(api), con)
		logger.Info("inferkit-server: admin API on /v1/admin, console on /api-keys")
	}
	if o.mcpServe {
		// The MCP tools call the API (api, which the console and admin
		// routes do not concern) in process.
		h, err := mcpserve.New(mcpserve.Config{API: api, Logger: logger})
		if err != nil {
			return err
		}
		root = mount(root, "/mcp", h)
		logger.Info("inferkit-server: MCP server on /mcp")
	}
	root = mount(root, "/v1/code-review/", review)
	if o.forge != "" {
		wh, err := review.Webhook(codereview.WebhookConfig{APIURL: o.forge, Token: o.forgeToken, Secret: o.forgeSecret, Key: o.forgeKey, Model: o.forgeModel, Logger: logger})
		if err != nil {
			return err
		}
		defer wh.Close() // after the HTTP server's shutdown: the reviews under way end
		root = mount(root, "/v1/code-review/webhook", wh)
		logger.Info("inferkit-server: reviewing pull requests", "forge", o.forge, "webhook", "/v1/code-review/webhook")
	}
	srv := newServer(root, logger)

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	logger.Info("inferkit-server: listening", "url", "http://"+ln.Addr().String()+"/v1")
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	logger.Info("inferkit-server: shutting down")
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		// Streams still running after the grace period are cut.
		logger.Warn("inferkit-server: forcing shutdown", "err", err)
		srv.Close()
	}
	// Background responses still running are stored as failed.
	api.Close()
	return nil // the deferred eng.Close frees the models
}

// mount serves h on path (and, for a path ending in /, every path under
// it), and the rest on api.
func mount(api http.Handler, path string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Path; p == path || strings.HasSuffix(path, "/") && strings.HasPrefix(p, path) {
			h.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})
}

// newServer returns the HTTP server of api, which answers every path:
// the API's routes, the operators' (/healthz, /readyz and, with metrics,
// /metrics), and a JSON error for the rest; with -admin-key, api is the
// API behind withConsole, which gives the console's pages their paths.
// No ServeMux stands in front of the API: one would answer an unclean
// path, such as //v1/models, with a redirect of its own.
//
// Its timeouts bound what a client holds without sending: the request's
// head (ReadHeaderTimeout) and a kept-alive connection between requests
// (IdleTimeout); api bounds the body itself, with a read deadline that
// ends with the body (httpapi.Config.BodyReadTimeout, by default
// httpapi.DefaultBodyReadTimeout). ReadTimeout is not set: it would
// bound head and body together, and refuse a large body on a slow link
// that the body's own deadline allows. WriteTimeout is not set: it would
// cut every stream that runs longer, and a generation may stream for
// minutes; a client that stops reading one is cut by the failed writes,
// and one that goes away cancels its generation.
func newServer(api http.Handler, logger *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           api,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
}

// demoModels writes the demo models into the user's cache directory and
// returns the catalog that serves them under the spec's ids: the tiny
// trained chat model, with a vision projector of random weights, for the
// chat ids and the multimodal decision ids; a BERT reranker of random
// weights of a fixed seed for the decision encoder; and the tiny trained
// embedding model as core-embed. The random ones are written once; the
// trained ones each time, so that they are the ones this binary ships.
func demoModels() ([]catalog.Model, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	dir = filepath.Join(dir, "inferkit")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	chat, projector, reranker := filepath.Join(dir, "demo-trained-chat.gguf"), filepath.Join(dir, "demo-random-v1-mmproj.gguf"), filepath.Join(dir, "demo-random-v1-reranker.gguf")
	embedder := filepath.Join(dir, "demo-trained-embedding.gguf")
	if err := writeTrained(chat, tinychat.Write); err != nil {
		return nil, err
	}
	if err := writeTrained(embedder, tinyembed.Write); err != nil {
		return nil, err
	}
	for _, f := range []struct {
		path  string
		write func(string) error
	}{
		{projector, func(p string) error {
			return inferencetest.WriteProjector(p, inferencetest.ProjectorOptions{TextEmbd: 128, Seed: 1})
		}},
		{reranker, func(p string) error {
			return inferencetest.WriteModel(p, inferencetest.Options{Arch: "bert", Seed: 1, Name: "inferkit demo reranker (random weights)"})
		}},
	} {
		if _, err := os.Stat(f.path); err == nil {
			continue
		}
		if err := f.write(f.path); err != nil {
			return nil, err
		}
	}
	var models []catalog.Model
	for _, id := range append(slices.Clone(specIDs), demoDecisionIDs...) {
		m, _ := policy.Model(id)
		m.Path, m.Projector = chat, projector // chat and decisions read images
		if id == policy.SystemOne340M {
			m.Path, m.Projector = reranker, ""
		}
		models = append(models, m)
	}
	models = append(models, catalog.Model{ID: demoEmbeddingID, Path: embedder, Kind: catalog.KindEmbedding,
		Name: "Core Embed (demo)", Description: "The tiny trained demo embedding model: it knows the few sentences of package tinyembed, and little else."})
	return models, nil
}
