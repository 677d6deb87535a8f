#ifndef INFERKIT_BRIDGE_H
#define INFERKIT_BRIDGE_H

#include <stdbool.h>
#include <stdint.h>
#include "llama.h"

void inferkit_set_progress(struct llama_model_params *p, uintptr_t handle);
void inferkit_route_logs(void);
double inferkit_log_sum_exp(const float *x, int n);
// inferkit_free_context and inferkit_free_projector stand for llama_free
// and mtmd_free (see deferred_free.c).
void inferkit_free_context(struct llama_context *ctx);
struct mtmd_context;
void inferkit_free_projector(struct mtmd_context *ctx);
llama_token inferkit_sample(struct llama_sampler *chain, struct llama_sampler *grammar,
		struct llama_context *ctx, int32_t idx, llama_token_data *buf, int32_t n_vocab,
		const llama_token *ban, int32_t n_ban);

#endif
