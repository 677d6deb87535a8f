package inference

import (
	"context"
	"fmt"

	"github.com/inferkit/inferkit/internal/hub"
)

// Errors of Pull that callers branch on.
var (
	// ErrHubOffline: the hub cannot be reached; a model pulled before is
	// still in the cache directory.
	ErrHubOffline = hub.ErrOffline
	// ErrChecksum: a downloaded file's SHA-256 differs from the one the
	// hub publishes; the file was removed and is not used.
	ErrChecksum = hub.ErrChecksum
	// ErrHubNotFound: the hub has no such repository, revision or file,
	// or it is private or gated.
	ErrHubNotFound = hub.ErrNotFound
)

// PullProgress is how far a Pull is, for a progress bar.
type PullProgress struct {
	// File is the file being downloaded: its path in the repository.
	File string
	// Done and Total are the bytes of all the model's files that are on
	// disk (cached and resumed bytes count) and their sum.
	Done, Total int64
	// Rate is the download's speed in bytes a second over the last few
	// seconds; 0 before it is known.
	Rate float64
}

// PulledModel are the files of a pulled model, verified, in the cache
// directory.
type PulledModel struct {
	// Path is the model's GGUF file, for catalog.Model.Path: the first
	// part of a split model, whose other parts lie beside it.
	Path string
	// Parts are all its files, Path first.
	Parts []string
	// Projector is the projector (mmproj) GGUF found beside the model,
	// for catalog.Model.Projector, or "".
	Projector string
	// Commit is the repository commit the files come from.
	Commit string
	// Offline is set where the hub could not be reached and the model
	// is the one an earlier Pull of the reference left in the cache
	// directory; the revision may have moved on the hub since.
	Offline bool
}

// Pull downloads the GGUF model that ref names from the Hugging Face hub
// into the cache directory dir, unless it is there already, and returns
// its files. ref is one of
//
//	hf.co/ORG/REPO:QUANT      the file of quantization QUANT (Q4_K_M,
//	                          any case); without :QUANT, the repository's
//	                          only model, or its Q4_K_M
//	hf.co/ORG/REPO/FILE.gguf  that file (ORG/REPO/FILE.gguf, without
//	                          hf.co/, too)
//
// with @REV at the end for a branch, tag or commit other than main, and
// https://HOST/ in place of hf.co/ for a mirror that speaks the hub's API.
// All the parts of a split model (NAME-00001-of-00003.gguf) and the
// projector (mmproj*.gguf) in the model's folder come with it.
//
// Downloads resume where an earlier one stopped, and a file is used only
// once its SHA-256 matches the one the hub publishes: ErrChecksum
// otherwise. Several processes may pull into one dir at once; each file is
// downloaded once. progress, if not nil, is called from Pull's goroutine
// a few times a second. Without a network, Pull returns the model an
// earlier Pull of the same reference left in dir, with Offline set, or
// fails fast with ErrHubOffline. Cancelling ctx stops it, keeping what was downloaded for
// the next Pull. Files live under dir/ORG/REPO/COMMIT/.
func Pull(ctx context.Context, ref, dir string, progress func(PullProgress)) (PulledModel, error) {
	r, err := hub.ParseRef(ref)
	if err != nil {
		return PulledModel{}, fmt.Errorf("inference: pull: %w", err)
	}
	if dir == "" {
		return PulledModel{}, fmt.Errorf("inference: pull %s: no cache directory", ref)
	}
	var cfg hub.Config
	if progress != nil {
		cfg.Progress = func(p hub.Progress) {
			progress(PullProgress{File: p.File, Done: p.Done, Total: p.Total, Rate: p.Rate})
		}
	}
	p, err := hub.Pull(ctx, cfg, r, dir)
	if err != nil {
		return PulledModel{}, fmt.Errorf("inference: pull %s: %w", ref, err)
	}
	return PulledModel{Path: p.Model, Parts: p.Parts, Projector: p.Projector, Commit: p.Commit, Offline: p.Offline}, nil
}
