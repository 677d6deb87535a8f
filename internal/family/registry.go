package family

// registry lists the families, the more specific first: a family whose
// template also holds another's markers comes before it.
func registry() []*Family {
	return []*Family{
		// Group A (Qwen, Hermes/ChatML, DeepSeek, GLM)
		// Group B (gpt-oss, Llama, Mistral, Granite, Phi-4)
		// Group C (Gemma, FunctionGemma, LFM2, Olmo 3, Nemotron)
	}
}
