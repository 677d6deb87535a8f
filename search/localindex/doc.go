// Package localindex is a search.Searcher over documents on local disk:
// a full-text index, kept in a directory, of folders of text, Markdown
// and HTML files, so that a server without internet access can still
// answer a web-search tool from its own documents.
//
// Open opens or creates the index in a directory. AddFolder indexes the
// .txt, .md, .markdown, .html and .htm files under a folder (HTML without
// its markup; titled by the first Markdown heading or HTML <title>, else
// the file name; dated by the file's modification time), replacing the
// documents of files indexed before. Search ranks the documents that
// match a search.Query's words, titles weighing twice the text, and
// returns each with a snippet of its text around the matched words.
//
// Each document's URL is the file URL of its absolute path, or, when
// FolderOptions.BaseURL says where the folder is served, that URL joined
// with the file's path under the folder. The URL is the document's
// identity, so indexing a folder again replaces its documents, and
// search.Query.Domains matches its host: file URLs match no domain.
//
// An Index is safe for concurrent use: searches run in parallel with
// each other and with AddFolder. Whoever calls Open must call Close,
// which waits for calls in progress; after it every method returns
// ErrClosed. Only one Index, in any process, may hold a directory at a
// time.
//
// The index is bleve (github.com/blevesearch/bleve/v2) with English
// stemming. The package is pure Go and builds with CGO_ENABLED=0.
package localindex
