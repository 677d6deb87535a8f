package family

// registry lists the families, the more specific first: a family whose
// template also holds another's markers comes before it.
func registry() []*Family {
	return []*Family{
		// Group A (Qwen, Hermes/ChatML, DeepSeek, GLM)
		qwen35, qwen3Coder, qwen3, deepSeekV31, deepSeekR1, deepSeekV3, glm47, glm45,
		// Group B (gpt-oss, Llama, Mistral, Granite, Phi-4)
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
		// Group C (Gemma, FunctionGemma, LFM2, Olmo 3, Nemotron)
		functionGemma, gemma4, gemma3, lfm2Thinking, lfm2, olmo3Think, olmo3, nemotron,
		// Last: any ChatML template with <tool_call> JSON calls, and "".
		hermes,
	}
}
