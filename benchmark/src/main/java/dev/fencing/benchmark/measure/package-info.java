/** Small tools the measurement classes share: scales, timing, percentiles, pools. */
@NullMarked
package dev.fencing.benchmark.measure;

import org.jspecify.annotations.NullMarked;
