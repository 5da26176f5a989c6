package dev.fencing.jpa;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import org.jspecify.annotations.Nullable;

/**
 * Fenced, one of its columns declared a reference to an unfenced {@link Kennel} {@code ON DELETE
 * CASCADE} in the column's SQL definition.
 */
@Entity
@Table(name = "cub")
@Fenced("pups")
public class Cub {
  @Id String id = "";

  @Column(
      name = "kennel_id",
      columnDefinition = "varchar(255) references kennel (id) on delete cascade")
  @Nullable String kennel;

  protected Cub() {}
}
