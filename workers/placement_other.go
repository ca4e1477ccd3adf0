//go:build !linux

package workers

import "errors"

var errPlacementUnsupported = errors.New("thread placement is supported only on Linux")

// applyPlacement reports that WithAffinity and WithNice are unsupported.
func applyPlacement(p *placement, i int) (restore func() []error, errs []error) {
	if p.affinity || p.nice != nil {
		errs = []error{errPlacementUnsupported}
	}
	return func() []error { return nil }, errs
}
