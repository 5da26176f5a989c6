package dev.fencing.jpa;

import jakarta.persistence.CollectionTable;
import jakarta.persistence.Column;
import jakarta.persistence.ElementCollection;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.OrderColumn;
import jakarta.persistence.Table;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * One resource per row, named by a column no update writes ({@code updatable = false}): plot owned
 * by "alice" is resource {@code plot:alice} for its whole life, whatever the instance's {@code
 * owner} is set to later. Owns an element collection and an ordered one.
 */
@Entity
@Table(name = "plot")
@Fenced(prefix = "plot:", attribute = "owner")
public class Plot {
  @Id String id = "";

  @Column(updatable = false)
  String owner = "";

  long size;

  @ElementCollection
  @CollectionTable(name = "plot_tag")
  Set<String> tags = new HashSet<>();

  @ElementCollection
  @CollectionTable(name = "plot_step")
  @OrderColumn
  List<String> steps = new ArrayList<>();

  protected Plot() {}

  Plot(String id, String owner) {
    this.id = id;
    this.owner = owner;
  }
}
