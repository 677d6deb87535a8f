package libllama

import "github.com/inferkit/inferkit/internal/backend"

// SkewStateLayout makes ctx's derived state layout count one layer too
// many, as a layout derived wrongly for a model would.
func SkewStateLayout(ctx backend.Context) {
	ctx.(*Context).states.(*seqLayout).nLayer++
}
