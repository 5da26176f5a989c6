package dev.fencing.jpa;

import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.JoinColumn;
import jakarta.persistence.ManyToOne;
import jakarta.persistence.Table;
import org.jspecify.annotations.Nullable;

/**
 * Fenced, its reference to an unfenced {@link Barn} mapped with no database action: whatever action
 * its foreign key has is declared in SQL, outside the mapping.
 */
@Entity
@Table(name = "foal")
@Fenced("foals")
public class Foal {
  @Id String id = "";

  @ManyToOne
  @JoinColumn(name = "barn_id")
  @Nullable Barn barn;

  protected Foal() {}

  Foal(String id, Barn barn) {
    this.id = id;
    this.barn = barn;
  }
}
