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

// inferkit_state_part is one memory of a context, in the order that its
// sequence states list them (see state_layout.cpp): an attention cache
// (recurrent 0) or a recurrent state. Its layers are layers[first_layer,
// first_layer+layers); n_layer is the count the state writes.
typedef struct {
	int32_t recurrent;
	uint32_t streams;
	uint32_t cells;
	uint32_t v_trans;
	uint32_t n_layer;
	int32_t first_layer;
	int32_t layers;
} inferkit_state_part;

// inferkit_state_layer is one layer of a memory: the element type and row
// size of its keys (a recurrent state's r) and values (s), whether it has
// them, and, for transposed values, their element size and rows.
typedef struct {
	int32_t has_k;
	int32_t has_v;
	int32_t k_type;
	int32_t v_type;
	uint64_t k_row;
	uint64_t v_row;
	uint32_t v_el;
	uint32_t v_embd;
} inferkit_state_layer;

// inferkit_state_layout fills parts and layers for ctx's memory and
// returns the parts' count; -1 for a memory it does not know, -2 when the
// arrays are too short, -3 when llama.cpp threw.
int inferkit_state_layout(struct llama_context *ctx, inferkit_state_part *parts, int max_parts,
		inferkit_state_layer *layers, int max_layers, uint32_t *pos_per_embd);

#endif
