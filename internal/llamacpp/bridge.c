#include <math.h>
#include "bridge.h"
#include "mtmd-helper.h"

extern bool inferkitProgress(float progress, void *user_data);
extern void inferkitLog(int level, char *text, void *user_data);

static bool progress_trampoline(float progress, void *user_data) {
	return inferkitProgress(progress, user_data);
}

static void log_trampoline(enum ggml_log_level level, const char *text, void *user_data) {
	inferkitLog((int)level, (char *)text, user_data);
}

void inferkit_set_progress(struct llama_model_params *p, uintptr_t handle) {
	p->progress_callback = progress_trampoline;
	p->progress_callback_user_data = (void *)handle;
}

void inferkit_route_logs(void) {
	llama_log_set(log_trampoline, NULL);
	mtmd_helper_log_set(log_trampoline, NULL); // and mtmd's own
}

// inferkit_sample picks a token from the logits of batch index idx. The
// chain samples first; when a grammar is given and rejects that token, the
// grammar masks the whole vocabulary and the chain samples again (checking
// one token is far cheaper than masking every step). Both accept the
// token. Banned tokens never are: they are masked before either looks.
// It returns -1, accepting nothing, when the grammar admits no token that
// is not banned. buf holds n_vocab entries.
static void fill(llama_token_data *buf, const float *logits, int32_t n_vocab, const llama_token *ban, int32_t n_ban) {
	for (int32_t i = 0; i < n_vocab; i++) {
		buf[i] = (llama_token_data){i, logits[i], 0.0f};
	}
	for (int32_t i = 0; i < n_ban; i++) {
		buf[ban[i]].logit = -INFINITY;
	}
}

llama_token inferkit_sample(struct llama_sampler *chain, struct llama_sampler *grammar,
		struct llama_context *ctx, int32_t idx, llama_token_data *buf, int32_t n_vocab,
		const llama_token *ban, int32_t n_ban) {
	const float *logits = llama_get_logits_ith(ctx, idx);
	fill(buf, logits, n_vocab, ban, n_ban);
	llama_token_data_array cur = {buf, (size_t)n_vocab, -1, false};
	llama_sampler_apply(chain, &cur);
	llama_token tok = cur.data[cur.selected].id;
	if (grammar != NULL) {
		llama_token_data one = {tok, 1.0f, 0.0f};
		llama_token_data_array single = {&one, 1, -1, false};
		llama_sampler_apply(grammar, &single);
		if (isinf(one.logit) && one.logit < 0) {
			fill(buf, logits, n_vocab, ban, n_ban);
			cur = (llama_token_data_array){buf, (size_t)n_vocab, -1, false};
			llama_sampler_apply(grammar, &cur);
			bool any = false;
			for (size_t i = 0; i < cur.size && !any; i++) {
				any = !(isinf(cur.data[i].logit) && cur.data[i].logit < 0);
			}
			if (!any) {
				return -1; // the grammar admits no token: nothing to accept
			}
			llama_sampler_apply(chain, &cur);
			tok = cur.data[cur.selected].id;
		}
		llama_sampler_accept(grammar, tok);
	}
	llama_sampler_accept(chain, tok);
	return tok;
}

// inferkit_log_sum_exp returns log(sum(exp(x[i]))) over n values,
// computed from the largest, in double: the normaliser of a log-softmax.
// Terms more than 50 below the largest, each under 2e-22, are left out.
double inferkit_log_sum_exp(const float *x, int n) {
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
