// Package catalog describes the models a server offers: their ids and
// aliases, the GGUF file behind each, what each is for (chat, decision or
// embedding), and limits, prices, modalities and features. It is pure Go
// and imports no engine. It holds no product's models: the caller gives
// the entries, such as the hosted Inference API's of package policy.
package catalog
