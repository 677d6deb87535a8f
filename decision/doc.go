// Package decision answers typed questions over a state with a probability
// for every allowed option, in one pass of a model.
//
// A Request holds a state (1 to 100,000 characters; on the wire a string,
// or a JSON object or array read as its JSON text) and up to 100
// questions, each under an id the model never sees: choice (pick one of 1
// to 255 named options), score (rate on an ordered scale of 2 to 10
// levels) and noul (yes or no). With a generative model the state is
// decoded once and every question is a branch of it (inference's
// Engine.Score): the prompt lists each question's options under labels
// (letters up to 26 options, numbers such as "001" beyond, digits for a
// scale, a yes/no pair), and a softmax over the labels' probabilities, at
// a configurable calibration temperature, gives the distribution. A label
// of several tokens scores the product of its tokens' probabilities, read
// on branches of the same prefix, so 255 options still take one decode of
// the state. Responses follow System One's shape, with its definition of
// confidence and our own measures under x_ names:
//
//	{"model": ..., "answers": {"id": {"type": "choice", "choice": ...,
//	  "probabilities": {...}, "confidence": ..., "x_entropy_confidence": ...,
//	  "x_option_mass": ...}}, "usage": {...}}
//
// A model that reads images (Config.Images: the engine loaded a vision
// projector for it) takes up to MaxImages pictures, which it sees before the
// state; their tokens count as input tokens.
//
// There is no free text: output tokens are always 0.
package decision
