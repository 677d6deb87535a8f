//go:build !unix

package hub

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"
)

// staleLock is the age past which a lock file whose holder no longer
// touches it is taken as left by a crashed process.
const staleLock = 2 * time.Minute

// lockFile takes the lock at path by creating the file exclusively,
// waiting while another holds it, until ctx ends. The holder touches the
// file every 20 seconds; a lock file older than staleLock is removed.
// unlock removes it.
func lockFile(ctx context.Context, path string) (unlock func(), err error) {
	for {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			f.Close()
			stop := make(chan struct{})
			done := make(chan struct{})
			go func() {
				defer close(done)
				t := time.NewTicker(20 * time.Second)
				defer t.Stop()
				for {
					select {
					case <-stop:
						return
					case now := <-t.C:
						os.Chtimes(path, now, now)
					}
				}
			}()
			return func() {
				close(stop)
				<-done
				os.Remove(path)
			}, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("hub: locking %s: %w", path, err)
		}
		if st, err := os.Stat(path); err == nil && time.Since(st.ModTime()) > staleLock {
			os.Remove(path)
			continue
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
