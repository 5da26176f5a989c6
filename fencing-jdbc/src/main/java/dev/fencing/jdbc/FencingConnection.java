package dev.fencing.jdbc;

import java.sql.Connection;

/**
 * Implemented by the connections of a {@link FencedDataSource}. Integrations (fencing-jpa) use it
 * to tell whether the connection under them is fenced, also through a pool's proxy: {@code
 * connection.isWrapperFor(FencingConnection.class)}.
 */
public interface FencingConnection extends Connection {}
