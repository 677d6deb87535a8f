#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"

extern void libllamaLog(int level, char *text, void *user_data);
extern bool libllamaProgress(float progress, void *user_data);

// The calls through the table.
#define IKL_DEF_F(ret, name, params, args) \
	ret ikl_##name(IKL_PARAMS params) { return a->name args; }
#define IKL_DEF_V(name, params, args) \
	void ikl_##name(IKL_PARAMS params) { a->name args; }
IKL_FUNCS(IKL_DEF_F, IKL_DEF_V)

static void log_trampoline(int level, const char *text, void *user_data) {
	libllamaLog(level, (char *)text, user_data);
}

static bool progress_trampoline(float progress, void *user_data) {
	return libllamaProgress(progress, user_data);
}

void ikl_set_progress(struct llama_model_params *p, uintptr_t handle) {
	p->progress_callback = progress_trampoline;
	p->progress_callback_user_data = (void *)handle;
}

void ikl_model_defaults(const struct ikl_api *a, struct llama_model_params *out) {
	*out = a->llama_model_default_params().p;
}

void ikl_context_defaults(const struct ikl_api *a, struct llama_context_params *out) {
	*out = a->llama_context_default_params().p;
}

// dl_flags loads a library with its own symbols first (RTLD_DEEPBIND):
// a program that also links llama.cpp in (the compiled-in backend)
// exports its own llama_* and ggml_* symbols, which would otherwise
// stand in for the loaded library's.
#ifdef RTLD_DEEPBIND
static const int dl_flags = RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND;
#else
static const int dl_flags = RTLD_NOW | RTLD_LOCAL;
#endif

// same_release reports whether version names release, alone or with a
// suffix after '-' (a development build of it: "0.4.0-dev").
static bool same_release(const char *version, const char *release) {
	size_t n = strlen(release);
	return strncmp(version, release, n) == 0 && (version[n] == 0 || version[n] == '-');
}

// check_defaults compares the defaults the library fills in with v0.4.0's:
// a library whose structs are laid out otherwise fails here, before any
// struct is passed to it.
static const char *check_defaults(const struct ikl_api *a) {
	union ikl_model_params_probe m = a->llama_model_default_params();
	if (m.p.n_gpu_layers != -1 || m.p.split_mode != 1 || m.p.load_mode != -1 || m.p.lazy_mode != 1 ||
			m.p.main_gpu != 0 || m.p.progress_callback != NULL || m.p.vocab_only || m.p.check_tensors ||
			!m.p.use_extra_bufts || m.p.no_host || m.p.no_alloc || m.p.load_mtp) {
		return "llama_model_default_params";
	}
	union ikl_context_params_probe c = a->llama_context_default_params();
	if (c.p.n_ctx != 512 || c.p.n_batch != 2048 || c.p.n_ubatch != 512 || c.p.n_seq_max != 1 ||
			c.p.n_outputs_max_per_seq != 1 || c.p.ctx_type != 0 || c.p.pooling_type != -1 ||
			c.p.flash_attn_type != -1 || c.p.yarn_ext_factor != -1.0f || c.p.defrag_thold != -1.0f ||
			c.p.cb_eval != NULL || c.p.type_k != IKL_TYPE_F16 || c.p.type_v != IKL_TYPE_F16 ||
			c.p.abort_callback != NULL || c.p.embeddings || !c.p.offload_kqv || !c.p.no_perf ||
			!c.p.op_offload || !c.p.swa_full || c.p.kv_unified || c.p.samplers != NULL ||
			c.p.n_samplers != 0 || c.p.ctx_other != NULL) {
		return "llama_context_default_params";
	}
	return NULL;
}

// preload_backends loads the ggml backend libraries in dir (the CPU
// variants) with dl_flags, before ggml_backend_load_all_from_path loads
// them without: it then finds them loaded, bound to the library's ggml.
// They stay loaded, as the library does.
static void preload_backends(const char *dir) {
	DIR *d = opendir(dir);
	if (d == NULL) {
		return;
	}
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		const char *n = e->d_name;
		size_t len = strlen(n);
		if (strncmp(n, "libggml-", 8) != 0 || len < 4 || strcmp(n + len - 3, ".so") != 0 ||
				strcmp(n, "libggml-base.so") == 0) {
			continue;
		}
		char path[4096];
		if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, n) < sizeof path) {
			dlopen(path, dl_flags);
		}
	}
	closedir(d);
}

struct ikl_api *ikl_open(const char *path, const char *dir, char *err, size_t size, char *found, size_t found_size) {
	found[0] = 0;
	void *h = dlopen(path, dl_flags);
	if (h == NULL) {
		const char *why = dlerror();
		snprintf(err, size, "cannot load %s: %s", path, why ? why : "dlopen failed");
		return NULL;
	}
	const char *(*version)(void) = (const char *(*)(void))dlsym(h, "llama_version");
	if (version == NULL) {
		snprintf(err, size, "%s is not a llama.cpp library of release %s or later: it has no llama_version", path, IKL_API_VERSION);
		dlclose(h);
		return NULL;
	}
	const char *v = version();
	snprintf(found, found_size, "%s", v ? v : "");
	if (v == NULL || !same_release(v, IKL_API_VERSION)) {
		snprintf(err, size, "%s is llama.cpp %s; inferkit binds the API of llama.cpp %s", path, v ? v : "(none)", IKL_API_VERSION);
		dlclose(h);
		return NULL;
	}
	struct ikl_api *a = calloc(1, sizeof *a);
	if (a == NULL) {
		snprintf(err, size, "out of memory");
		dlclose(h);
		return NULL;
	}
	a->handle = h;
#define IKL_SYM(name)                                                                      \
	*(void **)&a->name = dlsym(h, #name);                                                  \
	if (a->name == NULL) {                                                                 \
		snprintf(err, size, "%s (llama.cpp %s) lacks %s, which llama.cpp %s has", path, v, #name, \
				IKL_API_VERSION);                                                          \
		free(a);                                                                           \
		dlclose(h);                                                                        \
		return NULL;                                                                       \
	}
#define IKL_SYM_F(ret, name, params, args) IKL_SYM(name)
#define IKL_SYM_V(name, params, args) IKL_SYM(name)
	IKL_FUNCS(IKL_SYM_F, IKL_SYM_V)
	const char *bad = check_defaults(a);
	if (bad != NULL) {
		snprintf(err, size, "%s calls itself llama.cpp %s, but its %s are not that release's: another API", path, v, bad);
		free(a);
		dlclose(h);
		return NULL;
	}
	a->llama_log_set(log_trampoline, NULL);
	preload_backends(dir);
	a->ggml_backend_load_all_from_path(dir);
	if (a->ggml_backend_dev_count() == 0) {
		snprintf(err, size, "%s: no ggml backend could be loaded from %s (the libggml-cpu-*.so files ship beside libllama)", path, dir);
		free(a);
		return NULL; // the library stays loaded: its backends may be half registered
	}
	a->llama_backend_init();
	return a;
}

static void fill(llama_token_data *buf, const float *logits, int32_t n_vocab, const llama_token *ban, int32_t n_ban) {
	for (int32_t i = 0; i < n_vocab; i++) {
		buf[i] = (llama_token_data){i, logits[i], 0.0f};
	}
	for (int32_t i = 0; i < n_ban; i++) {
		buf[ban[i]].logit = -INFINITY;
	}
}

llama_token ikl_sample(const struct ikl_api *a, struct llama_sampler *chain, struct llama_sampler *grammar,
		struct llama_context *ctx, int32_t idx, llama_token_data *buf, int32_t n_vocab,
		const llama_token *ban, int32_t n_ban) {
	const float *logits = a->llama_get_logits_ith(ctx, idx);
	if (logits == NULL) {
		return -1;
	}
	fill(buf, logits, n_vocab, ban, n_ban);
	llama_token_data_array cur = {buf, (size_t)n_vocab, -1, false};
	a->llama_sampler_apply(chain, &cur);
	if (cur.selected < 0 || (size_t)cur.selected >= cur.size) {
		return -1;
	}
	llama_token tok = cur.data[cur.selected].id;
	if (grammar != NULL) {
		// Checking the one token the chain picked is far cheaper than
		// masking the whole vocabulary every step.
		llama_token_data one = {tok, 1.0f, 0.0f};
		llama_token_data_array single = {&one, 1, -1, false};
		a->llama_sampler_apply(grammar, &single);
		if (isinf(one.logit) && one.logit < 0) {
			fill(buf, logits, n_vocab, ban, n_ban);
			cur = (llama_token_data_array){buf, (size_t)n_vocab, -1, false};
			a->llama_sampler_apply(grammar, &cur);
			bool any = false;
			for (size_t i = 0; i < cur.size && !any; i++) {
				any = !(isinf(cur.data[i].logit) && cur.data[i].logit < 0);
			}
			if (!any) {
				return -1;
			}
			a->llama_sampler_apply(chain, &cur);
			if (cur.selected < 0 || (size_t)cur.selected >= cur.size) {
				return -1;
			}
			tok = cur.data[cur.selected].id;
		}
		a->llama_sampler_accept(grammar, tok);
	}
	a->llama_sampler_accept(chain, tok);
	return tok;
}

double ikl_log_sum_exp(const float *x, int n) {
	float hi = -INFINITY;
	for (int i = 0; i < n; i++) {
		if (x[i] > hi) {
			hi = x[i];
		}
	}
	if (!isfinite(hi)) {
		return hi;
	}
	double sum = 0;
	for (int i = 0; i < n; i++) {
		double d = (double)x[i] - (double)hi;
		if (d > -50.0) {
			sum += exp(d);
		}
	}
	return (double)hi + log(sum);
}
