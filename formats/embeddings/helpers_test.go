package embeddings

import (
	"time"
)

// parseBound is the time a parse may take, however hostile the body: far
// above a real parse, so that only a runaway fails.
const parseBound = 10 * time.Second
