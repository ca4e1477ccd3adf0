//go:build !linux

package workers

import "errors"

// ErrPlacementUnsupported is reported for WithAffinity and WithNice on
// systems where workgang cannot apply them.
var errPlacementUnsupported = errors.New("thread placement is supported only on Linux")

func applyPlacement(p *placement, i int) []error {
	if p.affinity || p.nice != nil {
		return []error{errPlacementUnsupported}
	}
	return nil
}
