/** The benchmark's results and the files they are written to. */
@NullMarked
package dev.fencing.benchmark.report;

import org.jspecify.annotations.NullMarked;
