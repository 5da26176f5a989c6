package dev.fencing.spring.boot.autoconfigure;

import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.jdbc.support.JdbcAccessor;
import org.springframework.util.ClassUtils;

/**
 * The {@code DataSource} a bean writes through, for the beans Spring applications build over one:
 * {@code JdbcTemplate} (any {@code JdbcAccessor}), {@code NamedParameterJdbcTemplate}, {@code
 * DataSourceTransactionManager} (and {@code JdbcTransactionManager}), and with spring-orm {@code
 * JpaTransactionManager} and an {@code EntityManagerFactory} built over a {@code DataSource}.
 */
final class DataSourceUsers {
  private static final boolean ORM =
      ClassUtils.isPresent(
          "org.springframework.orm.jpa.EntityManagerFactoryInfo",
          DataSourceUsers.class.getClassLoader());

  private DataSourceUsers() {}

  /** The data source {@code bean} uses; null if it is none of these, or uses none. */
  static @Nullable DataSource dataSourceOf(Object bean) {
    if (bean instanceof JdbcAccessor accessor) {
      return accessor.getDataSource();
    }
    if (bean instanceof NamedParameterJdbcTemplate named) {
      return named.getJdbcTemplate().getDataSource();
    }
    if (bean instanceof DataSourceTransactionManager manager) {
      return manager.getDataSource();
    }
    return ORM ? Orm.dataSourceOf(bean) : null;
  }

  /**
   * The data source a Spring {@code DelegatingDataSource} ({@code TransactionAwareDataSourceProxy},
   * {@code LazyConnectionDataSourceProxy}, ...) writes through; null for any other.
   */
  static @Nullable DataSource targetOf(DataSource dataSource) {
    return dataSource instanceof DelegatingDataSource delegating
        ? delegating.getTargetDataSource()
        : null;
  }

  /** Loaded only when spring-orm is present. */
  private static final class Orm {
    static @Nullable DataSource dataSourceOf(Object bean) {
      if (bean instanceof org.springframework.orm.jpa.JpaTransactionManager manager) {
        return manager.getDataSource();
      }
      if (bean instanceof org.springframework.orm.jpa.EntityManagerFactoryInfo info) {
        return info.getDataSource();
      }
      return null;
    }
  }
}
