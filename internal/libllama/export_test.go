package libllama

import "github.com/inferkit/inferkit/internal/backend"

// SkewStateLayout makes ctx's derived state layout count one layer too
// many, as a layout derived wrongly for a model would.
func SkewStateLayout(ctx backend.Context) {
	ctx.(*Context).states.(*seqLayout).nLayer++
}

// DropRollback makes ctx's recurrent model one whose checkpoint layout
// was not derived, as newContext leaves it then: no checkpoints, no
// rollback, and nothing tracked for one.
func DropRollback(ctx backend.Context) {
	c := ctx.(*Context)
	c.recurrent, c.rollback, c.decoded, c.pending = nil, 0, nil, nil
}
