package workers

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The probe learns the key context.Cause asks for, so that a run makes its
// cause context only when asked; without that key (a context package that
// asks Cause differently) a run makes it when a copy fails, and Cause and
// derived contexts work either way.
func TestCancelKey(t *testing.T) {
	require.NotNil(t, cancelKey, "context.Cause asked the probe no key: every failing run allocates its cause")
	for _, known := range []bool{true, false} {
		if !known {
			saved := cancelKey
			cancelKey = nil
			defer func() { cancelKey = saved }()
		}
		w := New("cancel-key", 2)
		fail := errors.New("fail")
		var cause, childCause error
		err := w.RunContext(context.Background(), 2, func(ctx context.Context, id int) error {
			if id == 0 {
				return fail
			}
			child, cancel := context.WithCancel(ctx)
			defer cancel()
			<-child.Done()
			cause, childCause = context.Cause(ctx), context.Cause(child)
			return nil
		})
		w.Close()
		assert.Equal(t, fail, err, "known key %v", known)
		assert.Equal(t, fail, cause, "known key %v: Cause", known)
		assert.Equal(t, fail, childCause, "known key %v: Cause of a derived context", known)
	}
}
