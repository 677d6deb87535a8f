// api.h declares the part of llama.h (llama.cpp release v0.4.0, the
// API this package binds) that the package calls, written here rather
// than included: the library is loaded at run time (dlopen), and no
// llama.cpp header is needed to build. Every struct passed by value is
// laid out as that release's, and the sizes below were read off its
// header; a library of another release is refused before any of them
// crosses (ikl_open checks llama_version first, then the defaults the
// library fills in).

#ifndef INFERKIT_LIBLLAMA_API_H
#define INFERKIT_LIBLLAMA_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// IKL_API_VERSION is the llama.cpp release whose API this file declares.
#define IKL_API_VERSION "0.4.0"

typedef int32_t llama_pos;
typedef int32_t llama_token;
typedef int32_t llama_seq_id;
typedef uint32_t llama_state_seq_flags;

// LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY: a sequence state of a recurrent
// memory alone, without a hybrid model's attention cells.
#define IKL_STATE_SEQ_PARTIAL_ONLY 1

struct llama_model;
struct llama_vocab;
struct llama_context;
struct llama_sampler;
struct llama_memory_i;
typedef struct llama_memory_i *llama_memory_t;

// enum llama_vocab_type
#define IKL_VOCAB_SPM 1
#define IKL_VOCAB_BPE 2

// enum llama_token_attr
#define IKL_ATTR_UNKNOWN (1 << 0)
#define IKL_ATTR_CONTROL (1 << 3)
#define IKL_ATTR_USER_DEFINED (1 << 4)
#define IKL_ATTR_LSTRIP (1 << 7)
#define IKL_ATTR_RSTRIP (1 << 8)

// enum ggml_type
#define IKL_TYPE_F16 1
#define IKL_TYPE_Q4_0 2
#define IKL_TYPE_Q8_0 8

// enum ggml_log_level
#define IKL_LOG_WARN 3
#define IKL_LOG_ERROR 4

// enum llama_flash_attn_type
#define IKL_FLASH_ATTN_DISABLED 0
#define IKL_FLASH_ATTN_ENABLED 1

// enum llama_load_mode
#define IKL_LOAD_MODE_NONE 0
#define IKL_LOAD_MODE_MMAP 1

typedef bool (*ikl_progress_callback)(float progress, void *user_data);
typedef void (*ikl_log_callback)(int level, const char *text, void *user_data);

struct llama_model_params {
	void *devices;
	const void *tensor_buft_overrides;
	int32_t n_gpu_layers;
	int32_t split_mode; // enum llama_split_mode
	int32_t load_mode;  // enum llama_load_mode
	int32_t lazy_mode;  // enum llama_lazy_mode
	int32_t main_gpu;
	const float *tensor_split;
	ikl_progress_callback progress_callback;
	void *progress_callback_user_data;
	const void *kv_overrides;
	bool vocab_only;
	bool check_tensors;
	bool use_extra_bufts;
	bool no_host;
	bool no_alloc;
	bool load_mtp;
};

struct llama_context_params {
	uint32_t n_ctx;
	uint32_t n_batch;
	uint32_t n_ubatch;
	uint32_t n_seq_max;
	uint32_t n_rs_seq;
	uint32_t n_outputs_max;
	uint32_t n_outputs_max_per_seq;
	int32_t n_threads;
	int32_t n_threads_batch;
	int32_t ctx_type;          // enum llama_context_type
	int32_t rope_scaling_type; // enum llama_rope_scaling_type
	int32_t pooling_type;      // enum llama_pooling_type
	int32_t attention_type;    // enum llama_attention_type
	int32_t flash_attn_type;   // enum llama_flash_attn_type
	float rope_freq_base;
	float rope_freq_scale;
	float yarn_ext_factor;
	float yarn_attn_factor;
	float yarn_beta_fast;
	float yarn_beta_slow;
	uint32_t yarn_orig_ctx;
	float defrag_thold;
	void *cb_eval;
	void *cb_eval_user_data;
	int32_t type_k; // enum ggml_type
	int32_t type_v;
	void *abort_callback;
	void *abort_callback_data;
	bool embeddings;
	bool offload_kqv;
	bool no_perf;
	bool op_offload;
	bool swa_full;
	bool kv_unified;
	void *samplers;
	size_t n_samplers;
	struct llama_context *ctx_other;
};

struct llama_batch {
	int32_t n_tokens;
	llama_token *token;
	float *embd;
	llama_pos *pos;
	int32_t *n_seq_id;
	llama_seq_id **seq_id;
	int8_t *logits;
};

typedef struct llama_token_data {
	llama_token id;
	float logit;
	float p;
} llama_token_data;

typedef struct llama_token_data_array {
	llama_token_data *data;
	size_t size;
	int64_t selected;
	bool sorted;
} llama_token_data_array;

struct llama_sampler_chain_params {
	bool no_perf;
};

// The sizes of v0.4.0's llama.h on the 64-bit targets this builds for.
_Static_assert(sizeof(void *) != 8 || sizeof(struct llama_model_params) == 80, "llama_model_params");
_Static_assert(sizeof(void *) != 8 || sizeof(struct llama_context_params) == 160, "llama_context_params");
_Static_assert(sizeof(void *) != 8 || sizeof(struct llama_batch) == 56, "llama_batch");
_Static_assert(sizeof(llama_token_data) == 12, "llama_token_data");
_Static_assert(sizeof(void *) != 8 || sizeof(llama_token_data_array) == 32, "llama_token_data_array");

// The defaults are read into buffers far larger than v0.4.0's structs, so
// that a library whose structs grew writes into this buffer, not past
// it, and its defaults are checked before anything else is passed.
union ikl_model_params_probe {
	struct llama_model_params p;
	char room[4096];
};
union ikl_context_params_probe {
	struct llama_context_params p;
	char room[4096];
};

// IKL_FUNCS lists the library's functions that the package calls:
// F(return type, name, (parameters), (arguments)), V for a void one; a
// function without parameters has () for them.
#define IKL_FUNCS(F, V) \
	F(const char *, llama_version, (), ()) \
	V(llama_backend_init, (), ()) \
	V(llama_log_set, (ikl_log_callback cb, void *ud), (cb, ud)) \
	F(union ikl_model_params_probe, llama_model_default_params, (), ()) \
	F(union ikl_context_params_probe, llama_context_default_params, (), ()) \
	F(struct llama_model *, llama_model_load_from_file, (const char *path, struct llama_model_params p), (path, p)) \
	V(llama_model_free, (struct llama_model * m), (m)) \
	F(const struct llama_vocab *, llama_model_get_vocab, (const struct llama_model *m), (m)) \
	F(int32_t, llama_model_n_ctx_train, (const struct llama_model *m), (m)) \
	F(int32_t, llama_model_n_embd, (const struct llama_model *m), (m)) \
	F(int32_t, llama_model_n_head, (const struct llama_model *m), (m)) \
	F(int32_t, llama_model_n_layer, (const struct llama_model *m), (m)) \
	F(uint32_t, llama_model_n_cls_out, (const struct llama_model *m), (m)) \
	F(uint64_t, llama_model_size, (const struct llama_model *m), (m)) \
	F(uint64_t, llama_model_n_params, (const struct llama_model *m), (m)) \
	F(int32_t, llama_model_meta_val_str, (const struct llama_model *m, const char *key, char *buf, size_t n), (m, key, buf, n)) \
	F(const char *, llama_model_chat_template, (const struct llama_model *m, const char *name), (m, name)) \
	F(bool, llama_model_is_recurrent, (const struct llama_model *m), (m)) \
	F(bool, llama_model_is_hybrid, (const struct llama_model *m), (m)) \
	F(int32_t, llama_vocab_type, (const struct llama_vocab *v), (v)) \
	F(int32_t, llama_vocab_n_tokens, (const struct llama_vocab *v), (v)) \
	F(const char *, llama_vocab_get_text, (const struct llama_vocab *v, llama_token t), (v, t)) \
	F(int32_t, llama_vocab_get_attr, (const struct llama_vocab *v, llama_token t), (v, t)) \
	F(bool, llama_vocab_is_eog, (const struct llama_vocab *v, llama_token t), (v, t)) \
	F(bool, llama_vocab_is_control, (const struct llama_vocab *v, llama_token t), (v, t)) \
	F(llama_token, llama_vocab_bos, (const struct llama_vocab *v), (v)) \
	F(llama_token, llama_vocab_eos, (const struct llama_vocab *v), (v)) \
	F(llama_token, llama_vocab_sep, (const struct llama_vocab *v), (v)) \
	F(bool, llama_vocab_get_add_bos, (const struct llama_vocab *v), (v)) \
	F(bool, llama_vocab_get_add_eos, (const struct llama_vocab *v), (v)) \
	F(bool, llama_vocab_get_add_sep, (const struct llama_vocab *v), (v)) \
	F(int32_t, llama_tokenize, (const struct llama_vocab *v, const char *text, int32_t n, llama_token *toks, int32_t max, bool add_special, bool parse_special), (v, text, n, toks, max, add_special, parse_special)) \
	F(int32_t, llama_token_to_piece, (const struct llama_vocab *v, llama_token t, char *buf, int32_t n, int32_t lstrip, bool special), (v, t, buf, n, lstrip, special)) \
	F(struct llama_context *, llama_init_from_model, (struct llama_model * m, struct llama_context_params p), (m, p)) \
	V(llama_free, (struct llama_context * c), (c)) \
	F(llama_memory_t, llama_get_memory, (const struct llama_context *c), (c)) \
	F(uint32_t, llama_n_ctx, (const struct llama_context *c), (c)) \
	F(uint32_t, llama_n_batch, (const struct llama_context *c), (c)) \
	F(uint32_t, llama_n_rs_seq, (const struct llama_context *c), (c)) \
	F(int32_t, llama_decode, (struct llama_context * c, struct llama_batch b), (c, b)) \
	F(int32_t, llama_encode, (struct llama_context * c, struct llama_batch b), (c, b)) \
	F(float *, llama_get_logits_ith, (struct llama_context * c, int32_t i), (c, i)) \
	F(float *, llama_get_embeddings_ith, (struct llama_context * c, int32_t i), (c, i)) \
	F(float *, llama_get_embeddings_seq, (struct llama_context * c, llama_seq_id s), (c, s)) \
	V(llama_memory_clear, (llama_memory_t m, bool data), (m, data)) \
	F(bool, llama_memory_seq_rm, (llama_memory_t m, llama_seq_id s, llama_pos p0, llama_pos p1), (m, s, p0, p1)) \
	V(llama_memory_seq_cp, (llama_memory_t m, llama_seq_id src, llama_seq_id dst, llama_pos p0, llama_pos p1), (m, src, dst, p0, p1)) \
	F(llama_pos, llama_memory_seq_pos_max, (llama_memory_t m, llama_seq_id s), (m, s)) \
	F(size_t, llama_state_seq_get_size, (struct llama_context * c, llama_seq_id s), (c, s)) \
	F(size_t, llama_state_seq_get_data, (struct llama_context * c, uint8_t *dst, size_t size, llama_seq_id s), (c, dst, size, s)) \
	F(size_t, llama_state_seq_set_data, (struct llama_context * c, const uint8_t *src, size_t size, llama_seq_id s), (c, src, size, s)) \
	F(size_t, llama_state_seq_get_size_ext, (struct llama_context * c, llama_seq_id s, llama_state_seq_flags f), (c, s, f)) \
	F(size_t, llama_state_seq_get_data_ext, (struct llama_context * c, uint8_t *dst, size_t size, llama_seq_id s, llama_state_seq_flags f), (c, dst, size, s, f)) \
	F(size_t, llama_state_seq_set_data_ext, (struct llama_context * c, const uint8_t *src, size_t size, llama_seq_id s, llama_state_seq_flags f), (c, src, size, s, f)) \
	F(struct llama_sampler *, llama_sampler_chain_init, (struct llama_sampler_chain_params p), (p)) \
	V(llama_sampler_chain_add, (struct llama_sampler * chain, struct llama_sampler *s), (chain, s)) \
	F(struct llama_sampler *, llama_sampler_init_greedy, (), ()) \
	F(struct llama_sampler *, llama_sampler_init_dist, (uint32_t seed), (seed)) \
	F(struct llama_sampler *, llama_sampler_init_top_k, (int32_t k), (k)) \
	F(struct llama_sampler *, llama_sampler_init_top_p, (float p, size_t keep), (p, keep)) \
	F(struct llama_sampler *, llama_sampler_init_min_p, (float p, size_t keep), (p, keep)) \
	F(struct llama_sampler *, llama_sampler_init_temp, (float t), (t)) \
	F(struct llama_sampler *, llama_sampler_init_penalties, (int32_t n_vocab, int32_t last_n, float repeat, float freq, float present), (n_vocab, last_n, repeat, freq, present)) \
	F(struct llama_sampler *, llama_sampler_init_grammar, (const struct llama_vocab *v, const char *gbnf, const char *root), (v, gbnf, root)) \
	V(llama_sampler_apply, (struct llama_sampler * s, llama_token_data_array * cur), (s, cur)) \
	V(llama_sampler_accept, (struct llama_sampler * s, llama_token t), (s, t)) \
	V(llama_sampler_free, (struct llama_sampler * s), (s)) \
	V(ggml_backend_load_all_from_path, (const char *dir), (dir)) \
	F(size_t, ggml_backend_dev_count, (), ())

#define IKL_FIELD_F(ret, name, params, args) ret(*name) params;
#define IKL_FIELD_V(name, params, args) void(*name) params;

// ikl_api is the library's functions, found by dlsym.
struct ikl_api {
	void *handle;
	IKL_FUNCS(IKL_FIELD_F, IKL_FIELD_V)
};

// ikl_open loads the library at path, checks its version and its
// defaults, finds every function above, initialises it, routes its log
// to the Go side, and loads its ggml backends from dir (the library's
// folder). It returns NULL and writes why into err (size bytes) when it
// cannot; found holds the library's version then, "" when it has none.
struct ikl_api *ikl_open(const char *path, const char *dir, char *err, size_t size, char *found, size_t found_size);

// Calls of the library's functions, as ikl_NAME(api, arguments...).
#define IKL_PARAMS(...) const struct ikl_api *a, ##__VA_ARGS__
#define IKL_CALL_F(ret, name, params, args) ret ikl_##name(IKL_PARAMS params);
#define IKL_CALL_V(name, params, args) void ikl_##name(IKL_PARAMS params);
IKL_FUNCS(IKL_CALL_F, IKL_CALL_V)

// ikl_sample picks a token from the logits of batch index idx: the chain
// first, then, when grammar is not NULL and rejects that token, the
// grammar masks the vocabulary and the chain picks again. Banned tokens
// are masked before either looks. It returns -1, accepting nothing, when
// the grammar admits no token.
llama_token ikl_sample(const struct ikl_api *a, struct llama_sampler *chain, struct llama_sampler *grammar,
		struct llama_context *ctx, int32_t idx, llama_token_data *buf, int32_t n_vocab,
		const llama_token *ban, int32_t n_ban);

// ikl_log_sum_exp returns log Σ exp(x[i]) from the largest, in double,
// leaving out terms more than 50 below it.
double ikl_log_sum_exp(const float *x, int n);

// ikl_model_defaults and ikl_context_defaults write the library's
// default parameters (checked by ikl_open) to out.
void ikl_model_defaults(const struct ikl_api *a, struct llama_model_params *out);
void ikl_context_defaults(const struct ikl_api *a, struct llama_context_params *out);

// ikl_set_progress sets p's progress callback to call the Go function
// libllamaProgress with handle.
void ikl_set_progress(struct llama_model_params *p, uintptr_t handle);

#endif
