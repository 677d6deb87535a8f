package family

import "strings"

// gemma3 is Gemma 3 (and Gemma 3n): <start_of_turn>role ... <end_of_turn>
// turns, the assistant's role named model.
//
// Gemma 3 has no tools here. Its chat template renders no tools, has no
// tool role (it raises unless roles alternate user/model) and the model
// has no call tokens; Google's guide has the caller describe functions in
// the prompt and read a JSON or Python call back from the answer. Doing
// that honestly needs the engine to write the tools into the prompt and
// to rewrite calls and results as plain turns, which Family cannot
// express; a grammar and a parser alone would force calls of tools the
// model was never shown. So its tools are off and a request that needs
// them is refused. It does not think.
var gemma3 = &Family{
	Name: "gemma3",
	Match: func(arch, template string) bool {
		return (arch == "gemma3" || arch == "gemma3n") &&
			strings.Contains(template, "<start_of_turn>") &&
			!strings.Contains(template, "<start_function_call>")
	},
	NewParser: func(ParserConfig) Parser { return newSplitter(markers{}, ParserConfig{}) },
}
