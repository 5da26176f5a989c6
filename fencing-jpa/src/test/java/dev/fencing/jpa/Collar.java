package dev.fencing.jpa;

import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.ManyToOne;
import jakarta.persistence.Table;
import org.hibernate.annotations.OnDelete;
import org.hibernate.annotations.OnDeleteAction;
import org.jspecify.annotations.Nullable;

/**
 * Fenced with another resource than its {@link Crate}, whose delete the database would make clear
 * its key.
 */
@Entity
@Table(name = "collar")
@Fenced("collars")
public class Collar {
  @Id String id = "";

  @ManyToOne
  @OnDelete(action = OnDeleteAction.SET_NULL)
  @Nullable Crate crate;

  protected Collar() {}

  Collar(String id, Crate crate) {
    this.id = id;
    this.crate = crate;
  }
}
