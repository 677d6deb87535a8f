#ifndef INFERKIT_BRIDGE_H
#define INFERKIT_BRIDGE_H

#include <stdbool.h>
#include <stdint.h>
#include "llama.h"

void inferkit_set_progress(struct llama_model_params *p, uintptr_t handle);
void inferkit_route_logs(void);

#endif
