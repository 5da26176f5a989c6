/**
 * The fence's schema: Flyway migrations in their own location ({@code classpath:db/fencing}), own
 * schema and own history table, and the {@link dev.fencing.migrations.FencingMigrations} API and
 * {@link dev.fencing.migrations.MigrateCommand} command that apply and check them.
 */
@NullMarked
package dev.fencing.migrations;

import org.jspecify.annotations.NullMarked;
