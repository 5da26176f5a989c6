/**
 * Test support: the one place that decides which real PostgreSQL every test of the project runs
 * against.
 *
 * <ul>
 *   <li>{@link dev.fencing.testing.TestPostgres} picks the shared server once per JVM.
 *   <li>{@link dev.fencing.testing.TestDatabase} creates and drops an isolated database on it.
 *   <li>{@link dev.fencing.testing.TestDatabaseExtension} gives a JUnit 5 test class (or method)
 *       its own database.
 *   <li>{@link dev.fencing.testing.EmbeddedCluster} is a dedicated, crashable server for
 *       fault-injection tests.
 * </ul>
 */
@NullMarked
package dev.fencing.testing;

import org.jspecify.annotations.NullMarked;
