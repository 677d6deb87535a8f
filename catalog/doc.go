// Package catalog describes the models a server offers: their ids and
// aliases, the GGUF file behind each, and (as the catalog grows) limits,
// prices, modalities and features. It is pure Go and imports no engine.
package catalog
