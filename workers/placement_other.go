//go:build !linux

package workers

import "errors"

// errPlacementUnsupported is reported for WithAffinity and WithNice on
// systems where workgang cannot apply them.
var errPlacementUnsupported = errors.New("thread placement is supported only on Linux")

// applyPlacement reports that WithAffinity and WithNice are unsupported; it
// changes nothing, so restore has nothing to put back.
func applyPlacement(p *placement, i int) (restore func() []error, errs []error) {
	restore = func() []error { return nil }
	if p.affinity || p.nice != nil {
		return restore, []error{errPlacementUnsupported}
	}
	return restore, nil
}
