package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/policy"
)

// isRef says whether a -model's PATH names a model on a hub, to pull,
// rather than a local file: hf.co/, huggingface.co/ or an http(s) URL.
func isRef(path string) bool {
	for _, p := range []string{"hf.co/", "huggingface.co/", "https://", "http://"} {
		if strings.HasPrefix(path, p) {
			return true
		}
	}
	return false
}

// pullDir is the directory pulled models go to: -pull-dir, or
// inferkit/models in the user's cache directory.
func pullDir(o options) (string, error) {
	if o.pullDir != "" {
		return o.pullDir, nil
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("inferkit-server: no -pull-dir and no user cache directory: %w", err)
	}
	return filepath.Join(dir, "inferkit", "models"), nil
}

// pullModels pulls the models whose paths are hub references, each
// reference once, and gives them the pulled files: the model's, and the
// projector beside it to a chat model that has none of its own.
func pullModels(ctx context.Context, o options, logger *slog.Logger) error {
	pulled := map[string]inference.PulledModel{}
	for i, m := range o.models {
		if !isRef(m.Path) {
			continue
		}
		p, ok := pulled[m.Path]
		if !ok {
			var err error
			if p, err = pull(ctx, o, m.Path, logger); err != nil {
				return fmt.Errorf("inferkit-server: -model %s: %w", m.ID, err)
			}
			pulled[m.Path] = p
		}
		o.models[i].Path = p.Path
		if (m.Kind == "" || m.Kind == catalog.KindChat) && m.Projector == "" {
			o.models[i].Projector = p.Projector
		}
	}
	return nil
}

// pull pulls the model ref names into the pull directory, logging its
// progress.
func pull(ctx context.Context, o options, ref string, logger *slog.Logger) (inference.PulledModel, error) {
	dir, err := pullDir(o)
	if err != nil {
		return inference.PulledModel{}, err
	}
	start := time.Now()
	p, err := inference.Pull(ctx, ref, dir, pullProgress(logger, ref))
	if err != nil {
		return p, err
	}
	if p.Offline {
		logger.Warn("inferkit-server: the hub cannot be reached; serving the model pulled before, whose revision may have moved since",
			"ref", ref, "path", p.Path, "commit", p.Commit)
	} else {
		logger.Info("inferkit-server: pulled", "ref", ref, "path", p.Path, "parts", len(p.Parts), "projector", p.Projector,
			"commit", p.Commit, "took", time.Since(start).Round(time.Millisecond))
	}
	return p, nil
}

// pullProgress logs a pull's progress line each time it passes another
// tenth, and at the end of each file: bytes done and total, and the rate.
func pullProgress(logger *slog.Logger, ref string) func(inference.PullProgress) {
	last, file := -1, ""
	return func(p inference.PullProgress) {
		if p.Total <= 0 {
			return
		}
		tenth := int(p.Done * 10 / p.Total)
		if tenth == last && p.File == file {
			return
		}
		last, file = tenth, p.File
		logger.Info("inferkit-server: pulling", "ref", ref, "file", p.File,
			"done_mib", p.Done>>20, "total_mib", p.Total>>20, "percent", p.Done*100/p.Total,
			"mib_per_s", fmt.Sprintf("%.1f", p.Rate/(1<<20)))
	}
}

// demoServed says what the demo models are, in the log.
const demoServed = "serving the tiny TRAINED demo models, the chat model under the chat and multimodal decision ids " +
	"(it answers right only in the phrasing it was trained on: see package inferencetest/tinychat) " +
	"and the embedding model under core-embed (package inferencetest/tinyembed), and RANDOM weights under system-one-340m"

// defaultModels are the models served with no -model: the demo models,
// with the chat ids on the model -default-model names when it can be
// pulled. It logs which, and why.
func defaultModels(ctx context.Context, o options, logger *slog.Logger) ([]catalog.Model, error) {
	models, err := demoModels()
	if err != nil {
		return nil, err
	}
	ids := strings.Join(append(append(slices.Clone(specIDs), demoDecisionIDs...), demoEmbeddingID), ",")
	if o.defaultModel == "" {
		logger.Warn("inferkit-server: no -model given; "+demoServed,
			"dir", filepath.Dir(models[0].Path), "ids", ids)
		return models, nil
	}
	p, err := pull(ctx, o, o.defaultModel, logger)
	if errors.Is(err, context.Canceled) {
		return nil, err
	}
	if err != nil {
		why := "the pull failed"
		if errors.Is(err, inference.ErrHubOffline) {
			why = "the hub cannot be reached"
		}
		logger.Warn("inferkit-server: no -model given and "+why+"; "+demoServed,
			"default_model", o.defaultModel, "err", err, "dir", filepath.Dir(models[0].Path), "ids", ids)
		return models, nil
	}
	for i, m := range models {
		if slices.Contains(specIDs, m.ID) {
			models[i].Path, models[i].Projector = p.Path, p.Projector
			models[i].InputModalities = []string{"text"}
			if p.Projector != "" {
				models[i].InputModalities = append(models[i].InputModalities, "image")
			}
		}
	}
	logger.Info("inferkit-server: no -model given; serving "+o.defaultModel+" under the chat ids, the tiny TRAINED demo model under "+
		policy.SystemOne27B+" and "+policy.SystemOne9B+", the TRAINED embedding model under "+demoEmbeddingID+", and RANDOM weights under "+policy.SystemOne340M,
		"chat_ids", strings.Join(specIDs, ","), "path", p.Path)
	return models, nil
}
