#include "bridge.h"

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
}
