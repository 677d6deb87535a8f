// Package grammar holds the bounds that keep llama.cpp's grammar engine and
// its JSON Schema converter from crashing, hanging or taking unbounded
// memory inside the host process.
//
// Both are C++ code that trusts its input. The GBNF parser recurses once
// per parenthesis, copies the item of a {m,n} repetition up to m times,
// loops until memory runs out on {m,n} with n < m, and recurses without end
// on hidden left recursion; its matcher remembers nothing, so some
// ambiguous grammars take exponential time. The JSON Schema converter
// recurses once per level, builds rule names that grow with the depth,
// runs them through a recursive std::regex, and can take time cubic in
// the number of an object's optional properties. A crash there ends the
// host process, so every grammar and schema is measured here first:
//
//   - Check parses a GBNF grammar the way llama.cpp does and refuses what
//     it would fail, crash, hang or grow without bound on;
//   - CheckSchema walks a JSON Schema the way the converter does,
//     estimating its work, and refuses one over the bounds (MaxSchemaBytes,
//     MaxSchemaDepth, repetitions over 2000, unresolvable or cyclic
//     references, patterns the converter cannot read, about half a second
//     of conversion);
//   - CompactSchema is CheckSchema that also returns the schema in the
//     compact form the bounds were measured on, for the converter.
//
// The package is pure Go: a request's grammar and schemas are checked when
// it arrives, before admission, with or without cgo. The conversion itself
// (llama.cpp's json_schema_to_grammar) and the parsing that follows stay in
// the backends (internal/llamacpp), which call these checks first; tests
// that compare the checks against llama.cpp's own parser and converter live
// there too. Every error wraps ErrInvalid. All functions are safe for
// concurrent use.
package grammar
