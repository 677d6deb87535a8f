// Package catalog describes the models a server offers: their ids and
// aliases, the GGUF file behind each, what each is for (chat, decision or
// embedding), and limits, prices, modalities and features. It is pure Go and imports no engine.
package catalog
