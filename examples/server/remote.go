package main

import (
	"cmp"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/policy"
)

// remoteFlags registers -remote-model, -remote-key and -remote-context;
// the models go to models as they are read, and apply, called once the
// flags are parsed, gives them their keys and contexts.
func remoteFlags(fs *flag.FlagSet, models *[]catalog.Model, getenv func(string) string) (apply func() error) {
	keys, contexts := map[string]string{}, map[string]int{}
	fs.Func("remote-model", "serve model ID from the inference server at URL (vLLM, SGLang, llama.cpp's server, Ollama, another inferkit: the OpenAI-compatible base URL, such as http://10.0.0.5:8000/v1), which calls it MODEL: `ID=URL[,URL...][#MODEL]`, several URLs for replicas (repeatable; the spec's decision ids are decision models)", func(s string) error {
		id, rest, ok := strings.Cut(s, "=")
		urls, name, _ := strings.Cut(rest, "#")
		if !ok || id == "" || urls == "" {
			return fmt.Errorf("want ID=URL[,URL...][#MODEL], got %q", s)
		}
		m, ok := policy.Model(id) // the spec's kind, limits and prices for its ids
		if !ok {
			m = catalog.Model{ID: id}
		}
		m.Path, m.Projector, m.InputModalities = "", "", []string{"text"}
		m.Remote = &catalog.Remote{URLs: strings.Split(urls, ","), Model: name}
		*models = append(*models, m)
		return nil
	})
	fs.Func("remote-key", "send the bearer `ID=KEY` to the upstream of -remote-model ID (default $INFERKIT_REMOTE_KEY_<ID>, the id in upper case with other characters as _, then $INFERKIT_REMOTE_KEY; repeatable)", func(s string) error {
		id, key, ok := strings.Cut(s, "=")
		if !ok || id == "" || key == "" {
			return fmt.Errorf("want ID=KEY, got %q", s)
		}
		keys[id] = key
		return nil
	})
	fs.Func("remote-context", "check requests to -remote-model ID against a context of N tokens, the upstream's (`ID=N`; default the spec's context for its ids, else 8192; repeatable)", func(s string) error {
		id, v, ok := strings.Cut(s, "=")
		n, err := strconv.Atoi(v)
		if !ok || id == "" || err != nil || n < 1 {
			return fmt.Errorf("want ID=N with a positive N, got %q", s)
		}
		contexts[id] = n
		return nil
	})
	return func() error {
		remote := func(id string) (*catalog.Remote, error) {
			i := slices.IndexFunc(*models, func(m catalog.Model) bool { return m.ID == id && m.Remote != nil })
			if i < 0 {
				return nil, fmt.Errorf("no -remote-model has the id %q", id)
			}
			return (*models)[i].Remote, nil
		}
		for id, key := range keys {
			r, err := remote(id)
			if err != nil {
				return fmt.Errorf("-remote-key: %w", err)
			}
			r.Key = key
		}
		for id, n := range contexts {
			r, err := remote(id)
			if err != nil {
				return fmt.Errorf("-remote-context: %w", err)
			}
			r.ContextLength = n
		}
		for i := range *models {
			m := &(*models)[i]
			if m.Remote == nil {
				continue
			}
			if m.Remote.Key == "" {
				m.Remote.Key = cmp.Or(getenv("INFERKIT_REMOTE_KEY_"+envName(m.ID)), getenv("INFERKIT_REMOTE_KEY"))
			}
			if m.Remote.ContextLength == 0 {
				m.Remote.ContextLength = m.ContextLength
			}
		}
		return nil
	}
}

// envName is id as part of an environment variable's name: upper case,
// other characters than letters and digits as _.
func envName(id string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			return r
		}
		return '_'
	}, id)
}
