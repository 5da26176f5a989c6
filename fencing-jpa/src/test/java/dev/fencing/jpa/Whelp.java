package dev.fencing.jpa;

import jakarta.persistence.Entity;
import jakarta.persistence.ForeignKey;
import jakarta.persistence.Id;
import jakarta.persistence.JoinColumn;
import jakarta.persistence.ManyToOne;
import jakarta.persistence.Table;
import org.jspecify.annotations.Nullable;

/**
 * Fenced, its foreign key to an unfenced {@link Kennel} declared {@code ON DELETE CASCADE} in the
 * key's SQL definition (no {@code @OnDelete}).
 */
@Entity
@Table(name = "whelp")
@Fenced("pups")
public class Whelp {
  @Id String id = "";

  @ManyToOne
  @JoinColumn(
      name = "kennel_id",
      foreignKey =
          @ForeignKey(
              name = "whelp_kennel",
              foreignKeyDefinition =
                  "foreign key (kennel_id) references kennel (id) on delete cascade"))
  @Nullable Kennel kennel;

  protected Whelp() {}

  Whelp(String id, Kennel kennel) {
    this.id = id;
    this.kennel = kennel;
  }
}
