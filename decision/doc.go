// Package decision answers typed questions over a state with a probability
// for every allowed option, in one pass of a model.
//
// A Request holds a state (1 to 100,000 characters) and up to 100 named
// questions: choice (pick one of named options), score (rate on an ordered
// scale of labels) and noul (yes or no). With a generative model the state
// is decoded once and every question is a branch of it (inference's
// Engine.Score): the prompt lists each question's options under labels
// that start with distinct single tokens, and a softmax over those labels'
// next-token logits, at a configurable calibration temperature, gives the
// distribution. Responses follow the System One shape:
//
//	{"model": ..., "answers": {"name": {"type": "choice", "choice": ...,
//	  "probabilities": {...}, "confidence": ...}}, "usage": {...}}
//
// A model that reads images (Config.Images: the engine loaded a vision
// projector for it) takes up to MaxImages pictures, which it sees before the
// state; their tokens count as input tokens.
//
// There is no free text: output tokens are always 0.
package decision
