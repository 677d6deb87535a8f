// A workaround for a use-after-free in the pinned ggml. ollama's patch 0020
// ("No alloc mode") makes ggml_backend_sched_free call each backend's reset
// function, read from the backend. llama_free and clip_free free their
// backends first and their scheduler after, so that read is of freed
// memory: harmless while the memory is intact, a crash now and then when
// another thread has been handed it meanwhile.
//
// The linker sends every call of ggml_backend_free from outside ggml to
// __wrap_ggml_backend_free (-Wl,--wrap, see deferred_free.go). While this
// thread frees a context or a projector through inferkit_free_context or
// inferkit_free_projector, the backends it frees wait, and are freed once
// the scheduler is gone.

#include <stdbool.h>
#include <stdlib.h>
#include "bridge.h"
#include "mtmd.h"

void __real_ggml_backend_free(ggml_backend_t backend);

static _Thread_local bool deferring;
static _Thread_local ggml_backend_t *deferred;
static _Thread_local int n_deferred, cap_deferred;

void __wrap_ggml_backend_free(ggml_backend_t backend) {
	if (deferring && backend != NULL) {
		if (n_deferred == cap_deferred) {
			int cap = cap_deferred ? 2 * cap_deferred : 8;
			ggml_backend_t *grown = realloc(deferred, cap * sizeof *grown);
			if (grown == NULL) {
				__real_ggml_backend_free(backend); // as before the workaround
				return;
			}
			deferred = grown;
			cap_deferred = cap;
		}
		deferred[n_deferred++] = backend;
		return;
	}
	__real_ggml_backend_free(backend);
}

static void free_deferred(void) {
	deferring = false;
	for (int i = 0; i < n_deferred; i++) {
		__real_ggml_backend_free(deferred[i]);
	}
	n_deferred = 0;
}

void inferkit_free_context(struct llama_context *ctx) {
	deferring = true;
	llama_free(ctx);
	free_deferred();
}

void inferkit_free_projector(struct mtmd_context *ctx) {
	deferring = true;
	mtmd_free(ctx);
	free_deferred();
}
