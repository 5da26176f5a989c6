/**
 * Fencing tokens for PostgreSQL over JDBC: {@link dev.fencing.jdbc.LeaseClient} issues them, {@link
 * dev.fencing.jdbc.Fencing#bind} carries them, {@link dev.fencing.jdbc.FencedDataSource} has
 * PostgreSQL compare them in the writer's own transaction. Start with {@link
 * dev.fencing.jdbc.Fencing}.
 */
@NullMarked
package dev.fencing.jdbc;

import org.jspecify.annotations.NullMarked;
