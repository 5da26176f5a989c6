/**
 * The README's main command: plays the founding race on a real PostgreSQL (embedded when no URL is
 * given) and, in later versions, measures what the fence costs.
 */
@NullMarked
package dev.fencing.benchmark;

import org.jspecify.annotations.NullMarked;
