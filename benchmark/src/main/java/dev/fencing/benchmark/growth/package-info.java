/**
 * Growth: what the check costs as resources, writes per transaction and same-token load grow, and
 * what the per-row triggers of protected tables cost.
 */
@NullMarked
package dev.fencing.benchmark.growth;

import org.jspecify.annotations.NullMarked;
