// Package jinja is a Jinja2 template engine for the chat templates that
// GGUF models carry (Hugging Face's chat_template), written in pure Go.
//
// Rendering aims to be byte-identical to Python Jinja2 3.1 configured as
// transformers' apply_chat_template does: an immutable sandbox with
// trim_blocks, lstrip_blocks and the loopcontrols extension, autoescaping
// off, a tojson filter that calls json.dumps(x, ensure_ascii=False, ...),
// and the globals raise_exception and strftime_now. Values print as Python
// prints them (True, None, 1.0, ['a', 'b'], {'k': 'v'}), strings index by
// code point, and undefined variables behave as jinja2.Undefined.
//
// Supported: print, if/elif/else, for (with else, inline if filters, tuple
// unpacking, loop.*, recursive loops), break/continue, set (also block set
// and namespace attributes), macro with call blocks, filter blocks, with,
// raw, generation, comments and whitespace control; the expression syntax of
// Jinja2, the common Python methods of str, dict and list, and the built-in
// filters and tests used by chat templates.
//
// Not supported, failing with an error when used: template inheritance and
// inclusion (extends, block, include, import), the filters groupby, slice,
// truncate, wordwrap, urlize, urlencode, xmlattr, filesizeformat, pprint and
// random, "\N{name}" string escapes, and integers beyond int64 (Python would
// switch to big integers). Known differences: safe and escape return plain
// strings (Python's Markup, which escapes what is added to it, is not
// modelled), and printing a generator or bound method shows a fixed address
// where Python shows a real one.
package jinja
