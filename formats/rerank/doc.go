// Package rerank is the wire style of POST /v1/rerank, in the shape that
// Cohere, Jina, vLLM and llama.cpp share: a request names a model, a
// query and the documents to rank against it (strings, or objects whose
// "text" is the document), with top_n and return_documents; the response
// lists results by descending relevance_score, each with the index of its
// document in the request and, unless return_documents is false, the
// document. Parse checks a request (Canonical), NewResponse writes the
// answer from one score per document. Errors are written in the chat
// style with formats.WriteError, and name the parameter at fault, such as
// documents[3].text.
//
// Every field of the request is honoured or refused: fields beyond the
// five above (Cohere's rank_fields, max_chunks_per_doc or
// max_tokens_per_doc, a document's image) are a 400 naming them, never
// ignored. return_documents defaults to true, as Jina and vLLM have it;
// Cohere's v2 clients send false.
//
// Its types are plain data: a value is safe for concurrent reads, and
// none needs closing.
package rerank
