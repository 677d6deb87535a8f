// Package bitmap decodes untrusted pictures (PNG, JPEG and GIF) in Go into
// packed 8-bit RGB, under bounds that are checked from the picture's bytes
// before any pixel is decoded, so that no picture, however made, takes
// more memory or time than its size allows and no C image decoder ever
// reads a request's bytes.
//
// Check reads a picture's structure without decoding it: its format and
// size, and, for a JPEG, every marker, counting its scans. It refuses a
// picture over MaxSide pixels on a side, a JPEG of more than MaxScans
// scans, and one whose decoding would take more than MaxDecodeBytes (a
// progressive JPEG keeps every block's coefficients; a 16-bit PNG takes 8
// bytes a pixel). Decode checks, then decodes with Go's own decoders,
// which stop at the pixels the header declares: a PNG or GIF whose
// compressed data holds more is refused without inflating the rest.
// Decode reads the picture through a reader that fails once its context
// ends, so a decode stops soon after the request that wanted it goes
// away. Transparency is flattened onto white, and a GIF's first frame is
// placed on its logical screen, which sets the picture's size.
package bitmap
