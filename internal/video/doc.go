// Package video samples a bounded number of frames from a short clip, an
// MP4, WebM or animated GIF, so that a vision projector can read the clip
// as a few images, each with its time.
//
// Kind sniffs a clip's container from its bytes; Frames returns the
// sampled frames as PNG. Sampling is even over the clip's duration D: for
// N frames (Options.MaxFrames) the sample times are the centres of N equal
// intervals, t_i = (i+0.5)·D/N, and sample i is the picture on screen at
// t_i, that is the last frame that starts at or before t_i. Each Frame
// carries its t_i. A sample whose picture is identical to the previous
// sample's is left out, so a clip with fewer frames than N (or a still
// one) gives fewer frames.
//
// Animated GIFs are decoded in Go: frames are composited onto the logical
// screen following their disposal methods, as browsers do (the screen
// starts transparent; background disposal clears to transparent), and
// transparency left in a sampled picture is flattened onto white. A frame
// delay of 0 or 1 hundredths of a second counts as 100 ms, as in browsers.
// The GIF is walked once without decoding to refuse, before any pixel is
// decoded, a logical screen over 4096 pixels a side, more than 10,000
// frames or frames totalling more than 128 megapixels; frames are then
// decoded one at a time, so memory stays within a few copies of the screen.
//
// MP4 (ISO BMFF, including QuickTime and 3GP) and WebM (Matroska) clips are
// decoded by an ffmpeg subprocess, Debian's ffmpeg package: Frames returns
// ErrNoFFmpeg when it is not installed. The clip goes to a private
// temporary folder; ffmpeg reads it with its demuxer forced by Kind, local
// files only, no standard input, 2 decoder threads, an address-space limit
// of 2 GiB and frames of at most 8192×4320 pixels, and it is killed, with
// any children, when the context ends or Options.Timeout passes. A first
// ffmpeg run lists the video stream's packets without decoding them, to
// learn the duration; a second decodes the clip once and writes the
// sampled frames, scaled down, as PNG (one run with an fps filter was four
// times faster than one seeking run per frame on 10 s clips).
//
// Clips over MaxBytes are refused before anything else. No input makes
// Frames panic, hang past its timeout, or hold memory beyond these bounds;
// a clip that cannot be read gives an error that says why.
package video
