// state_layout.cpp reads, from a context's memory, the facts that its
// sequence states are written with (llama_state_seq_get_data): which
// memories in which order, their streams and cells, and each layer's
// element types and row sizes. statecheck.go checks a state against them
// before llama.cpp reads it. llama.h does not expose these facts, so this
// file includes llama.cpp's own headers from the pinned module (found
// through the include folder that CGO_CPPFLAGS names) and reads two
// private members of llama_kv_cache through an explicit instantiation,
// which C++ exempts from access checks. It reads and never changes.

#include "../src/llama-context.h"
#include "../src/llama-kv-cache.h"
#include "../src/llama-kv-cache-iswa.h"
#include "../src/llama-memory-hybrid.h"
#include "../src/llama-memory-recurrent.h"
#include "../src/llama-model.h"

#include <exception>

extern "C" {
#include "bridge.h"
}

namespace {

// rob defines get(Tag), which returns the member pointer M; an explicit
// instantiation may name private members.
template <typename Tag, auto M> struct rob {
    friend auto get(Tag) { return M; }
};

struct kv_layers_tag {
    friend auto get(kv_layers_tag);
};
struct kv_v_trans_tag {
    friend auto get(kv_v_trans_tag);
};

template struct rob<kv_layers_tag, &llama_kv_cache::layers>;
template struct rob<kv_v_trans_tag, &llama_kv_cache::v_trans>;

struct layout {
    inferkit_state_part * parts;
    int max_parts;
    int n_parts;
    inferkit_state_layer * layers;
    int max_layers;
    int n_layers;
};

// add_kv describes an attention cache, as llama_kv_cache::state_write
// writes it.
bool add_kv(layout & l, const llama_kv_cache * kv, const llama_hparams & hp) {
    if (kv == nullptr || l.n_parts >= l.max_parts) {
        return false;
    }
    const auto & layers = kv->*get(kv_layers_tag{});
    const bool v_trans = kv->*get(kv_v_trans_tag{});
    inferkit_state_part & p = l.parts[l.n_parts++];
    p.recurrent = 0;
    p.streams = kv->get_n_stream();
    p.cells = kv->get_size();
    p.v_trans = v_trans ? 1 : 0;
    p.n_layer = (uint32_t) layers.size();
    p.first_layer = l.n_layers;
    p.layers = 0;
    for (const auto & layer : layers) {
        if (l.n_layers >= l.max_layers) {
            return false;
        }
        inferkit_state_layer & s = l.layers[l.n_layers++];
        p.layers++;
        const uint32_t nk = hp.n_embd_k_gqa(layer.il);
        const uint32_t nv = hp.n_embd_v_gqa(layer.il);
        s.has_k = 1;
        s.has_v = 1;
        s.k_type = (int32_t) layer.k->type;
        s.k_row = ggml_row_size(layer.k->type, nk);
        s.v_type = (int32_t) layer.v->type;
        s.v_row = ggml_row_size(layer.v->type, nv);
        s.v_el = (uint32_t) ggml_type_size(layer.v->type);
        s.v_embd = nv;
    }
    return true;
}

// add_recurrent describes a recurrent state, as
// llama_memory_recurrent::state_write writes it.
bool add_recurrent(layout & l, const llama_memory_recurrent * mem, const llama_hparams & hp) {
    if (mem == nullptr || l.n_parts >= l.max_parts) {
        return false;
    }
    inferkit_state_part & p = l.parts[l.n_parts++];
    p.recurrent = 1;
    p.streams = 1;
    p.cells = mem->size;
    p.v_trans = 0;
    p.n_layer = hp.n_layer;
    p.first_layer = l.n_layers;
    p.layers = 0;
    for (uint32_t il = 0; il < hp.n_layer; il++) {
        const ggml_tensor * r = il < mem->r_l.size() ? mem->r_l[il] : nullptr;
        const ggml_tensor * s = il < mem->s_l.size() ? mem->s_l[il] : nullptr;
        if (l.n_layers >= l.max_layers) {
            return false;
        }
        inferkit_state_layer & y = l.layers[l.n_layers++];
        p.layers++;
        y.has_k = r != nullptr;
        y.has_v = s != nullptr;
        y.k_type = r ? (int32_t) r->type : 0;
        y.k_row = r ? ggml_row_size(r->type, hp.n_embd_r()) : 0;
        y.v_type = s ? (int32_t) s->type : 0;
        y.v_row = s ? ggml_row_size(s->type, hp.n_embd_s()) : 0;
        y.v_el = s ? (uint32_t) ggml_type_size(s->type) : 0;
        y.v_embd = hp.n_embd_s();
    }
    return true;
}

} // namespace

extern "C" int inferkit_state_layout(struct llama_context * ctx,
        inferkit_state_part * parts, int max_parts,
        inferkit_state_layer * layers, int max_layers,
        uint32_t * pos_per_embd) {
    try {
        const llama_model * model = llama_get_model(ctx);
        llama_memory_i * mem = llama_get_memory(ctx);
        if (model == nullptr || mem == nullptr) {
            return -1;
        }
        const llama_hparams & hp = model->hparams;
        *pos_per_embd = hp.n_pos_per_embd();
        layout l{parts, max_parts, 0, layers, max_layers, 0};
        bool ok;
        if (auto * iswa = dynamic_cast<llama_kv_cache_iswa *>(mem)) {
            ok = add_kv(l, iswa->get_base(), hp) && add_kv(l, iswa->get_swa(), hp);
        } else if (auto * hybrid = dynamic_cast<llama_memory_hybrid *>(mem)) {
            ok = add_kv(l, hybrid->get_mem_attn(), hp) && add_recurrent(l, hybrid->get_mem_recr(), hp);
        } else if (auto * kv = dynamic_cast<llama_kv_cache *>(mem)) {
            ok = add_kv(l, kv, hp);
        } else if (auto * rec = dynamic_cast<llama_memory_recurrent *>(mem)) {
            ok = add_recurrent(l, rec, hp);
        } else {
            return -1;
        }
        return ok ? l.n_parts : -2;
    } catch (const std::exception &) {
        return -3;
    }
}
