package family

// registry lists the families, the more specific first: a family whose
// template also holds another's markers comes before it.
func registry() []*Family {
	return []*Family{
		// Nemotron 3 Nano writes Qwen3.5's calls; it keeps to its
		// architectures, so it goes first.
		nemotron,
		// Qwen, DeepSeek, GLM.
		qwen35, qwen3Coder, qwen3, deepSeekV31, deepSeekR1, deepSeekV3, glm47, glm45,
		gptOSS,
		llama4,
		llama3,
		ministral, // before mistral: its templates hold [TOOL_CALLS] too
		mistral,
		granite33, // before granite3: 3.2 and 3.3 templates hold <|tool_call|> too
		granite32,
		granite3,
		granite4,
		phi4Reasoning, // before phi4 and phi4Mini, whose markers it shares
		phi4Mini,
		phi4,
		functionGemma, // before gemma3, whose architecture it has
		gemma4, gemma3, lfm2Thinking, lfm2, olmo3Think, olmo3,
		// Last: any ChatML template with <tool_call> JSON calls, and "".
		hermes,
	}
}
