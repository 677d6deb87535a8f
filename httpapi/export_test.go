package httpapi

import "slices"

// RouteMeters returns the pattern of every route Register registers, with
// whether rate limits count its tokens (meterTokens), for the tests of
// package httpapi_test.
func RouteMeters(h *Handler) map[string]bool {
	out := map[string]bool{}
	for _, rt := range slices.Concat(h.generationRoutes(), h.modelRoutes(), h.decisionRoutes()) {
		out[rt.pattern] = rt.meter == meterTokens
	}
	return out
}

// Patterns returns the pattern of every route of h's route tables, the
// operators' included.
func Patterns(h *Handler) []string {
	var out []string
	for _, rt := range slices.Concat(h.generationRoutes(), h.modelRoutes(), h.decisionRoutes(), h.operationRoutes()) {
		out = append(out, rt.pattern)
	}
	return out
}
